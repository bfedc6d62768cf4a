//! docs/tune.md carries the rules table exactly as `--rules` prints it, and
//! a reasoning paragraph for every rule.

#[test]
fn docs_carry_the_rules_table() {
    let path = format!("{}/../../docs/tune.md", env!("CARGO_MANIFEST_DIR"));
    let Ok(doc) = std::fs::read_to_string(&path) else {
        panic!("{path} missing");
    };
    let table = peregrine_tune::render::rules_markdown();
    assert!(
        doc.contains(&table),
        "docs/tune.md: paste the output of `peregrine tune --rules`"
    );
    for rule in peregrine_tune::rules::RULES {
        let short = rule.key.rsplit('.').next().unwrap_or(rule.key);
        let mentions = doc.matches(short).count();
        assert!(mentions >= 2, "docs/tune.md does not explain {}", rule.key);
    }
}
