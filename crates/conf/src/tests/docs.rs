//! The directive reference (docs/directives.md) lists every directive of the
//! table and every refused name, so the documentation cannot fall behind.

use crate::table::{TABLE, UNSUPPORTED};

const DOC: &str = include_str!("../../../../docs/directives.md");

#[test]
fn every_directive_is_documented() {
    for spec in TABLE {
        let cell = format!("| `{}` |", spec.name);
        assert!(
            DOC.contains(&cell),
            "docs/directives.md lacks {}",
            spec.name
        );
    }
    for name in UNSUPPORTED {
        assert!(
            DOC.contains(&format!("`{name}`")),
            "docs/directives.md lacks the refused {name}"
        );
    }
}
