//! Reading the DOM that headless Chromium serialized: an element by the
//! start of its opening tag, its text, its cells. The page sets its
//! attributes in a fixed order (class first), so a test names an element
//! by the exact start of its tag, as the contract's hooks are written.

/// The element whose opening tag starts with `open` (e.g.
/// `<tr class="entry" data-entry="database"`), up to its matching closing
/// tag; panics with the DOM when there is none.
pub fn element<'a>(dom: &'a str, open: &str) -> &'a str {
    try_element(dom, open).unwrap_or_else(|| panic!("no `{open}…` in the DOM:\n{}", body(dom)))
}

/// [`element`], `None` when there is none.
pub fn try_element<'a>(dom: &'a str, open: &str) -> Option<&'a str> {
    let start = dom.find(open)?;
    let name: String = open[1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let (opening, closing) = (format!("<{name}"), format!("</{name}>"));
    let mut depth = 0usize;
    let mut at = start;
    loop {
        let next_open = dom[at + 1..].find(&opening).map(|i| i + at + 1);
        let next_close = dom[at..].find(&closing).map(|i| i + at)?;
        match next_open {
            Some(o) if o < next_close => {
                // The same tag nested inside (not a longer name such as
                // <table> for <ta>).
                let after = dom.as_bytes().get(o + opening.len()).copied();
                if matches!(after, Some(b' ' | b'>')) {
                    depth += 1;
                }
                at = o;
            }
            _ => {
                if depth == 0 {
                    return Some(&dom[start..next_close + closing.len()]);
                }
                depth -= 1;
                at = next_close + 1;
            }
        }
    }
}

/// The text of `html`: tags removed, the entities the serializer writes
/// decoded, whitespace collapsed.
pub fn text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text of the `<td>` of class `class` (its first class) in `row`.
pub fn cell(row: &str, class: &str) -> String {
    text(element(row, &format!("<td class=\"{class}")))
}

/// How many times `needle` occurs in `dom`.
pub fn count(dom: &str, needle: &str) -> usize {
    dom.matches(needle).count()
}

/// The opening `<body …>` tag.
pub fn body_tag(dom: &str) -> &str {
    let start = dom.find("<body").expect("a body");
    &dom[start..=start + dom[start..].find('>').expect("its end")]
}

/// The body without the page's script, for failure messages.
pub fn body(dom: &str) -> &str {
    let start = dom.find("<body").unwrap_or(0);
    let end = dom.find("<script").unwrap_or(dom.len()).max(start);
    &dom[start..end]
}
