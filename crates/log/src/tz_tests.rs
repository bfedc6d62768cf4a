use super::*;
use crate::tz_rule::Rule;

/// Builds a TZif file: a v1 block (32-bit times) and, for version 2, a v2
/// block (64-bit times) and a footer, as `zic` lays them out.
fn tzif(version: u8, transitions: &[(i64, u8)], types: &[i32]) -> Vec<u8> {
    fn header(out: &mut Vec<u8>, version: u8, ntime: usize, ntype: usize) {
        out.extend_from_slice(b"TZif");
        out.push(version);
        out.extend_from_slice(&[0; 15]);
        // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
        for n in [0, 0, 0, ntime, ntype, 4] {
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
    }
    fn block(out: &mut Vec<u8>, wide: bool, transitions: &[(i64, u8)], types: &[i32]) {
        for (t, _) in transitions {
            if wide {
                out.extend_from_slice(&t.to_be_bytes());
            } else {
                out.extend_from_slice(&(*t as i32).to_be_bytes());
            }
        }
        out.extend(transitions.iter().map(|(_, i)| *i));
        for off in types {
            out.extend_from_slice(&off.to_be_bytes());
            out.extend_from_slice(&[0, 0]);
        }
        out.extend_from_slice(b"ABC\0");
    }
    let mut out = Vec::new();
    header(&mut out, version, transitions.len(), types.len());
    block(&mut out, false, transitions, types);
    if version >= b'2' {
        header(&mut out, version, transitions.len(), types.len());
        block(&mut out, true, transitions, types);
        out.extend_from_slice(b"\nABC-1\n");
    }
    out
}

#[test]
fn offsets_between_transitions() {
    let types = [3600, 7200, 19_800];
    let trans = [(1_000, 1), (2_000, 0), (3_000, 2)];
    for version in [0, b'2', b'3'] {
        let z = parse_tzif(&tzif(version, &trans, &types)).expect("parses");
        assert_eq!(z.offset_at(-5), 3600, "before the first: type 0");
        assert_eq!(z.offset_at(999), 3600);
        assert_eq!(z.offset_at(1_000), 7200);
        assert_eq!(z.offset_at(1_999), 7200);
        assert_eq!(z.offset_at(2_000), 3600);
        assert_eq!(z.offset_at(2_999), 3600);
        // After the last transition: the v1 file keeps the last type; v2+
        // files follow their footer rule (`ABC-1`: +01:00).
        let after = if version == 0 { 19_800 } else { 3600 };
        assert_eq!(z.offset_at(3_000), after);
        assert_eq!(z.offset_at(i64::MAX / 4), after);
    }
    let utc = parse_tzif(&tzif(0, &[], &[0])).expect("parses");
    assert_eq!(utc, Zone::fixed(0));
}

#[test]
fn bad_files_are_refused_without_panic() {
    let good = tzif(b'2', &[(1_000, 1), (2_000, 0)], &[0, 3600]);
    for n in 0..good.len() {
        // Cutting into the data block must fail; cutting the footer is fine.
        let got = parse_tzif(&good[..n]);
        assert!(got.is_none() || n >= good.len() - 7, "cut at {n}");
    }
    assert!(
        parse_tzif(&tzif(b'2', &[(1, 5)], &[0])).is_none(),
        "type index out of range"
    );
    assert!(parse_tzif(&tzif(b'2', &[], &[])).is_none(), "no types");
    assert!(parse_tzif(b"not a zone file at all, clearly not TZif").is_none());
}

#[test]
fn footer_rule_after_the_last_transition() {
    // A slim file: one transition in 1996, then the footer's EU rule.
    let mut b = tzif(b'2', &[(820_454_400, 1)], &[0, 3600]);
    b.truncate(b.len() - "ABC-1\n".len());
    b.extend_from_slice(b"CET-1CEST,M3.5.0,M10.5.0/3\n");
    let z = parse_tzif(&b).expect("parses");
    assert_eq!(z.offset_at(0), 0, "before the transition: type 0");
    assert_eq!(z.offset_at(1_767_225_600), 3600); // 2026-01-01
    assert_eq!(z.offset_at(1_782_864_000), 7200); // 2026-07-01
    assert_eq!(z.offset_at(4_102_444_800 + 180 * 86_400), 7200); // mid-2100
}

#[test]
fn footer_agrees_with_the_table() {
    // Debian's fat Europe/Paris lists transitions to 2037: its footer rule
    // must give the same offset at every hour of 2000..2037.
    let path = Path::new(ZONEINFO_DIR).join("Europe/Paris");
    let Some(z) = read_tzif(&path) else {
        return; // tzdata not installed
    };
    let rule = z.rule.expect("Paris has a footer rule");
    let mut t = 946_684_800; // 2000-01-01
    while t < 2_145_916_800 {
        assert_eq!(rule.offset_at(t), z.offset_at(t), "at {t}");
        t += 3600;
    }
}

#[test]
fn tz_values() {
    assert_eq!(load(Some("")), Some(Zone::fixed(0)));
    assert_eq!(load(Some(":")), Some(Zone::fixed(0)));
    assert_eq!(load(Some("UTC0")).map(|z| z.offset_at(0)), Some(0));
    let ny = load(Some("EST5EDT,M3.2.0,M11.1.0")).expect("a rule");
    assert_eq!(ny.offset_at(1_767_225_600), -5 * 3600);
    assert_eq!(ny.offset_at(1_782_864_000), -4 * 3600);
    assert_eq!(load(Some("/nonexistent/zone")), None);
    assert_eq!(load(Some("../../../etc/passwd")), None);
    // Debian's tzdata, when installed: Paris is +01:00 in January and
    // +02:00 in July (the offsets nginx printed with TZ=Europe/Paris).
    if Path::new(ZONEINFO_DIR).join("Europe/Paris").exists() {
        let z = load(Some("Europe/Paris")).expect("tzdata zone");
        assert_eq!(z.offset_at(1_767_225_600), 3600); // 2026-01-01
        assert_eq!(z.offset_at(1_782_864_000), 7200); // 2026-07-01
        assert_eq!(load(Some(":Europe/Paris")), Some(z));
    }
}

proptest::proptest! {
    #[test]
    fn arbitrary_tzif_bytes_never_panic(
        tail in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
        version in proptest::sample::select(vec![0u8, b'2', b'3']),
    ) {
        let mut b = b"TZif".to_vec();
        b.push(version);
        b.extend_from_slice(&tail);
        if let Some(z) = parse_tzif(&b) {
            // Whatever parsed answers every instant.
            let _ = z.offset_at(0);
            proptest::prop_assert_eq!(z.transitions.len(), z.offsets.len());
        }
    }

    #[test]
    fn arbitrary_tz_strings_never_panic(s in "\\PC{0,30}") {
        if let Some(r) = Rule::parse(&s) {
            let _ = r.offset_at(0);
            let _ = r.offset_at(i64::from(i32::MAX));
        }
    }
}
