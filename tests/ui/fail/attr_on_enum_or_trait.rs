// The attribute goes on a struct or an async fn only.
use zb_health::prelude::zb_health;

#[zb_health(name = "mode")]
enum Mode {
    Primary,
    Standby,
}

#[zb_health(name = "check")]
trait Check {}

fn main() {}
