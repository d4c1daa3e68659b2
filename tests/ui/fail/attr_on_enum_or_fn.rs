// The attribute goes on a struct only.
use zb_health::prelude::zb_health;

#[zb_health(name = "mode")]
enum Mode {
    Primary,
    Standby,
}

#[zb_health(name = "check")]
async fn check() {}

fn main() {}
