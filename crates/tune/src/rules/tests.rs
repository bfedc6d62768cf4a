use super::*;

#[test]
fn every_key_once_and_documented() {
    for (i, r) in RULES.iter().enumerate() {
        assert!(
            RULES[..i].iter().all(|o| o.key != r.key),
            "duplicate {}",
            r.key
        );
        for field in [r.what, r.default, r.recommendation, r.why, r.source] {
            assert!(!field.is_empty(), "{} has an empty field", r.key);
        }
    }
    assert!(rule("net.core.somaxconn").is_some());
    assert!(rule("Net.core.somaxconn").is_none());
}

#[test]
fn ints_parse() {
    assert_eq!(
        ints("4096 87380 16777216", 3),
        Ok(vec![4096, 87380, 16777216])
    );
    assert!(ints("65000", 2).is_err());
    assert_eq!(ints("1 # comment", 1), Ok(vec![1]));
    assert!(int("x").is_err());
    assert_eq!(int("-3"), Ok(-3));
}
