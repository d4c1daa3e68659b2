// R4: a misspelt custom `type:` (`CahceProbe`) is one error, ours, at the
// manifest path, naming the YAML line and column: no suggestion that
// rewrites the macro call, nothing else about the missing type.
zb_health::manifest!(Health = "manifests/type_typo.yaml");

pub struct CacheProbe;

fn main() {}
