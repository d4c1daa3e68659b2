use super::*;

fn sample(at_ms: u64, status: &str) -> String {
    format!(r#"{{"atMs":{at_ms},"status":"{status}","durationMs":1.5,"outcome":"completed"}}"#)
}

fn probe(name: &str, runs: u64, samples: &[String], transitions: &str) -> String {
    format!(
        r#"{{"name":"{name}","tiers":["ready"],"status":"Healthy","description":null,"durationMs":1.5,"outcome":"completed","sinceMs":1,"flaps":0,"runs":{runs},"samples":[{}],"transitions":[{transitions}]}}"#,
        samples.join(",")
    )
}

fn doc(now: u64, started: u64, probes: &[String], cluster: &str, delta: Option<&str>) -> String {
    let delta = delta.map_or(String::new(), |d| format!(",\"delta\":{d}"));
    format!(
        r#"{{"service":"orders","nowMs":{now},"startedMs":{started},"flapWindowMs":3600000,"tiers":{{"ready":{{"status":"Healthy","code":200,"atMs":1}},"active":null,"live":null}},"probes":[{}],"lifecycle":null,"events":[],"cluster":{cluster},"capacity":{{"samples":3,"transitions":20,"events":20}}{delta}}}"#,
        probes.join(",")
    )
}

#[test]
fn a_delta_adds_the_new_samples_and_keeps_the_quiet_probes() {
    let full = doc(
        100,
        1,
        &[
            probe("db", 2, &[sample(10, "Healthy"), sample(20, "Healthy")], ""),
            probe("cache", 1, &[sample(15, "Healthy")], ""),
        ],
        r#"{"members":[]}"#,
        None,
    );
    let mut kept = parse(&full).unwrap();
    assert!(!kept.is_delta());
    // The delta repeats the sample at 100 it may have held already, and
    // brings two new ones; the cache did not run.
    let delta = doc(
        200,
        1,
        &[probe(
            "db",
            4,
            &[
                sample(100, "Healthy"),
                sample(150, "Unhealthy"),
                sample(190, "Healthy"),
            ],
            r#"{"atMs":150,"from":"Healthy","to":"Unhealthy","outcome":"errored","description":null}"#,
        )],
        "null",
        Some(r#"{"sinceMs":100,"names":["db","cache"],"clusterUnchanged":true}"#),
    );
    kept.merge(parse(&delta).unwrap()).unwrap();
    assert_eq!(kept.now_ms, 200);
    let names: Vec<&str> = kept.probes.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["db", "cache"]);
    let db = &kept.probes[0];
    // Capacity 3: the oldest went.
    let at: Vec<u64> = db.samples.iter().map(|s| s.at_ms).collect();
    assert_eq!(at, [20, 150, 190]);
    assert_eq!(db.runs, 4);
    assert_eq!(db.transitions.len(), 1);
    assert_eq!(kept.probes[1].samples.len(), 1);
    // The cluster was unchanged: the kept one stays.
    assert_eq!(kept.cluster_json(), r#"{"members":[]}"#);
}

#[test]
fn a_probe_that_went_goes_and_a_restarted_process_is_not_merged() {
    let full = doc(
        100,
        1,
        &[probe("db", 1, &[sample(10, "Healthy")], "")],
        "null",
        None,
    );
    let mut kept = parse(&full).unwrap();
    let delta = doc(
        200,
        1,
        &[],
        r#"{"members":[]}"#,
        Some(r#"{"sinceMs":100,"names":[],"clusterUnchanged":false}"#),
    );
    kept.merge(parse(&delta).unwrap()).unwrap();
    assert!(kept.probes.is_empty());
    assert_eq!(kept.cluster_json(), r#"{"members":[]}"#);

    let restarted = doc(
        300,
        250,
        &[],
        "null",
        Some(r#"{"sinceMs":200,"names":[],"clusterUnchanged":false}"#),
    );
    assert!(kept.merge(parse(&restarted).unwrap()).is_err());
    // A whole document is no delta to merge either.
    assert!(kept.merge(parse(&full).unwrap()).is_err());
}

#[test]
fn the_members_history_urls_are_read_from_the_cluster() {
    let cluster = r#"{"self":"a","active":"a","members":[
        {"id":"a","address":"127.0.0.1:7001","status":"up","reachable":true,"active":true,"self":true,"shared":{},"ready":null,"history":"http://127.0.0.1:9101/health/history"},
        {"id":"b","address":"127.0.0.1:7002","status":"removed","reachable":false,"active":false,"self":false,"shared":{},"ready":null,"history":"http://127.0.0.1:9102/health/history"},
        {"id":"c","address":"127.0.0.1:7003","status":"up","reachable":false,"active":false,"self":false,"shared":{},"ready":null,"history":null},
        {"id":"d","address":"127.0.0.1:7004","status":"leaving","reachable":false,"active":false,"self":false,"shared":{},"ready":null,"history":"http://127.0.0.1:9104/health/history"},
        {"id":"e","address":"127.0.0.1:7005","status":"leaving","reachable":true,"active":false,"self":false,"shared":{},"ready":null,"history":"http://127.0.0.1:9105/health/history"},
        {"id":"f","address":"127.0.0.1:7006","status":"up","reachable":false,"active":false,"self":false,"shared":{},"ready":null,"history":"http://127.0.0.1:9106/health/history"}]}"#;
    let kept = parse(&doc(1, 1, &[], cluster, None)).unwrap();
    // Removed and departed (leaving, unreachable) ones are not; a
    // draining one and a crashed one are.
    assert_eq!(
        kept.member_urls(),
        [
            "http://127.0.0.1:9101/health/history",
            "http://127.0.0.1:9105/health/history",
            "http://127.0.0.1:9106/health/history"
        ]
    );
    assert!(
        parse(&doc(1, 1, &[], "null", None))
            .unwrap()
            .member_urls()
            .is_empty()
    );
}

#[test]
fn the_summary_names_the_failing_probes_worst_first() {
    let mut degraded = probe("cache", 1, &[sample(1, "Degraded")], "");
    degraded = degraded.replace(
        r#""status":"Healthy","description":null"#,
        r#""status":"Degraded","description":"slow""#,
    );
    let mut down = probe("db", 1, &[sample(1, "Unhealthy")], "");
    down = down.replace(r#""status":"Healthy""#, r#""status":"Unhealthy""#);
    let text = doc(
        1,
        1,
        &[degraded, down, probe("queue", 1, &[], "")],
        "null",
        None,
    )
    .replace(
        r#""active":null"#,
        r#""active":{"status":"Unhealthy","code":503,"atMs":1}"#,
    );
    let kept = parse(&text).unwrap();
    let summary = kept.summary();
    assert_eq!(summary.status, Some(Status::Unhealthy));
    let names: Vec<&str> = summary.failing.iter().map(|f| f.name).collect();
    assert_eq!(names, ["db", "cache"]);
    assert_eq!(summary.failing[1].description, Some("slow"));
    assert!(!summary.draining && !summary.starting);
}

#[test]
fn what_is_no_history_document_is_named() {
    for (bad, why) in [
        ("", "not a history document: not a JSON object"),
        ("[]", "not a history document: not a JSON object"),
        ("<html></html>", "not a history document: not a JSON object"),
        (
            "{\"tiers\":{},\"probes\":[]}",
            "not a history document: no `nowMs`",
        ),
        (
            "{\"nowMs\":1,\"tiers\":{}}",
            "not a history document: no `probes`",
        ),
    ] {
        assert_eq!(parse(bad).unwrap_err(), why, "{bad:?}");
    }
    for bad in ["{", "{\"a\":}", "{\"a\":1,}", "{\"a\":1} {}", "{\"a\":tru}"] {
        let why = parse(bad).unwrap_err();
        assert!(
            why.starts_with("not a history document: invalid JSON: "),
            "{bad:?}: {why}"
        );
    }
    // The shape, but not the contract.
    let why = parse(r#"{"nowMs":1,"tiers":{},"probes":[{"name":1}]}"#).unwrap_err();
    assert!(why.starts_with("not a history document: "), "{why}");
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    let depth = 100_000;
    let deep = format!(
        "{{\"nowMs\":1,\"tiers\":{{}},\"probes\":{}{}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    assert!(parse(&deep).is_err());
}
