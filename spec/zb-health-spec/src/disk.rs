//! `kind: disk`'s free-space levels: the one syntax of `degraded_below` and
//! `unhealthy_below`, read by the manifest and usable in code.
//!
//! A level is a **share** of the filesystem's size, `10%` or `2.5%` (at
//! most two decimals, at most `100%`), or an amount of **bytes**: a whole
//! number and a unit, decimal `B`, `kB`, `MB`, `GB`, `TB` (powers of 1000)
//! or binary `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024), e.g. `500MiB`,
//! `2GB`. Units are case-sensitive, as written here, so `mb` (millibits)
//! is refused rather than guessed.

use std::fmt;

/// Units of a byte level, each with its multiplier.
const UNITS: [(&str, u64); 9] = [
    ("B", 1),
    ("kB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];

/// How a level is written, for the help of a malformed one.
pub const FREE_SPACE_SYNTAX: &str = "write a share of the filesystem, e.g. `10%` (at most `100%`, two decimals), or bytes with a unit, e.g. `500MiB` or `2GB` (units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)";

/// A free-space level of `kind: disk` (see the [module docs](self)):
/// the probe is `Degraded` (or `Unhealthy`) while the free space is below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FreeSpace {
    /// A share of the filesystem's size, in hundredths of a percent
    /// (`10%` is `1000`); at most `10_000`.
    Share(u16),
    /// An amount of bytes.
    Bytes(u64),
}

impl FreeSpace {
    /// `percent`% of the filesystem, capped at 100.
    pub const fn percent(percent: u8) -> Self {
        let p = if percent > 100 { 100 } else { percent };
        FreeSpace::Share(p as u16 * 100)
    }

    /// `n` bytes.
    pub const fn bytes(n: u64) -> Self {
        FreeSpace::Bytes(n)
    }

    /// Parses the one syntax (see the [module docs](self)); the error says
    /// what is wrong, and [`FREE_SPACE_SYNTAX`] how to write it.
    pub fn parse(text: &str) -> Result<Self, String> {
        if let Some(number) = text.strip_suffix('%') {
            return parse_share(number)
                .ok_or_else(|| format!("`{text}` is not a share from `0%` to `100%`"));
        }
        let split = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        // One space may stand between the number and its unit.
        let (digits, unit) = (&text[..split], &text[split..]);
        let unit = unit.strip_prefix(' ').unwrap_or(unit);
        if digits.is_empty() {
            return Err(format!(
                "`{text}` is neither a share nor an amount of bytes"
            ));
        }
        let Some((_, scale)) = UNITS.iter().find(|(u, _)| *u == unit) else {
            return Err(if unit.is_empty() {
                format!("`{text}` has no unit")
            } else {
                format!("`{text}` has an unknown unit `{unit}`")
            });
        };
        digits
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(*scale))
            .map(FreeSpace::Bytes)
            .ok_or_else(|| format!("`{text}` is more bytes than a filesystem can hold"))
    }

    /// The level in bytes on a filesystem of `total` bytes.
    pub fn bytes_of(self, total: u64) -> u64 {
        match self {
            FreeSpace::Bytes(n) => n,
            // Exact: at most u64::MAX × 10_000, well within u128.
            FreeSpace::Share(hundredths) => {
                (u128::from(total) * u128::from(hundredths) / 10_000) as u64
            }
        }
    }

    /// Whether a probe with `unhealthy` below `degraded` could ever be
    /// `Degraded`: `false` when both are the same sort (shares, or bytes)
    /// and the unhealthy level is not lower, so `Degraded` would never
    /// show. A share and a byte level are compared only at run time.
    pub fn leaves_room_for_degraded(degraded: FreeSpace, unhealthy: FreeSpace) -> bool {
        match (degraded, unhealthy) {
            (FreeSpace::Share(d), FreeSpace::Share(u)) => u < d,
            (FreeSpace::Bytes(d), FreeSpace::Bytes(u)) => u < d,
            _ => true,
        }
    }
}

/// `12`, `12.5`, `12.25` in hundredths, at most 100%.
fn parse_share(number: &str) -> Option<FreeSpace> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || whole.len() > 3 || !digits(whole) || fraction.len() > 2 {
        return None;
    }
    if number.contains('.') && (fraction.is_empty() || !digits(fraction)) {
        return None;
    }
    let hundredths =
        whole.parse::<u16>().ok()? * 100 + format!("{fraction:0<2}").parse::<u16>().ok()?;
    (hundredths <= 10_000).then_some(FreeSpace::Share(hundredths))
}

impl fmt::Display for FreeSpace {
    /// The syntax it parses from: `10%`, `2.5%`, `500MiB`, `2GB`, `1234B`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FreeSpace::Share(h) if h % 100 == 0 => write!(f, "{}%", h / 100),
            FreeSpace::Share(h) if h % 10 == 0 => write!(f, "{}.{}%", h / 100, h % 100 / 10),
            FreeSpace::Share(h) => write!(f, "{}.{:02}%", h / 100, h % 100),
            FreeSpace::Bytes(n) => {
                // The largest unit that divides it exactly.
                let (unit, scale) = UNITS
                    .iter()
                    .filter(|(_, s)| n % s == 0 && n != 0)
                    .max_by_key(|(_, s)| *s)
                    .copied()
                    .unwrap_or(("B", 1));
                write!(f, "{}{unit}", n / scale)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FreeSpace::{self, Bytes, Share};

    #[test]
    fn shares_and_bytes_parse_and_print_back() {
        for (text, level) in [
            ("10%", Share(1000)),
            ("2.5%", Share(250)),
            ("0.25%", Share(25)),
            ("100%", Share(10_000)),
            ("0%", Share(0)),
            ("500MiB", Bytes(500 << 20)),
            ("2GB", Bytes(2_000_000_000)),
            ("1234B", Bytes(1234)),
            ("3KiB", Bytes(3072)),
        ] {
            assert_eq!(FreeSpace::parse(text), Ok(level), "{text}");
            assert_eq!(level.to_string(), text);
        }
        assert_eq!(FreeSpace::parse("500 MiB"), Ok(Bytes(500 << 20)));
    }

    #[test]
    fn malformed_levels_are_refused_with_the_reason() {
        for (text, reason) in [
            ("120%", "not a share from `0%` to `100%`"),
            ("100.01%", "not a share"),
            ("1.234%", "not a share"),
            ("-5%", "not a share"),
            ("5.%", "not a share"),
            ("500", "has no unit"),
            ("500mb", "unknown unit `mb`"),
            ("1.5GB", "unknown unit `.5GB`"),
            ("lots", "neither a share nor an amount of bytes"),
            ("99999999999TiB", "more bytes than a filesystem can hold"),
        ] {
            let err = FreeSpace::parse(text).expect_err(text);
            assert!(err.contains(reason), "{text}: {err}");
        }
    }

    #[test]
    fn a_level_in_bytes_of_a_filesystem() {
        assert_eq!(FreeSpace::percent(10).bytes_of(4 << 20), (4 << 20) / 10);
        assert_eq!(Share(250).bytes_of(10_000), 250);
        assert_eq!(Bytes(7).bytes_of(0), 7);
        assert_eq!(Share(10_000).bytes_of(u64::MAX), u64::MAX);
        assert_eq!(FreeSpace::percent(200), Share(10_000));
    }

    #[test]
    fn an_unhealthy_level_must_be_lower_to_leave_room_for_degraded() {
        let room = FreeSpace::leaves_room_for_degraded;
        assert!(room(Share(1000), Share(500)));
        assert!(!room(Share(500), Share(500)));
        assert!(!room(Bytes(1), Bytes(2)));
        assert!(room(Share(1), Bytes(u64::MAX)));
    }
}
