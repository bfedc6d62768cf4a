//! `split_clients STRING $VARIABLE { PERCENT VALUE; ... }`
//! (`ngx_http_split_clients_module`): the table of shares, each turned
//! into its upper bound on the 32-bit MurmurHash2 range as nginx turns it;
//! `*` takes the rest. The run-time side is `peregrine_core::split_clients`.

use super::Builder;
use super::handlers::{arg, msg};
use crate::error::Result;
use crate::model::SplitClientsConf;
use crate::syntax::{Block, Directive};

/// 100.00 %, in nginx's hundredths of a percent.
const WHOLE: u64 = 10_000;

impl Builder {
    pub(super) fn split_clients(
        &mut self,
        d: &Directive,
        block: &Block,
    ) -> Result<SplitClientsConf> {
        let var = arg(d, 1);
        let Some(name) = var.strip_prefix('$').filter(|n| !n.is_empty()) else {
            return Err(msg(d, format!("invalid variable name \"{var}\"")));
        };
        for v in super::vars::names(arg(d, 0)) {
            if !self.used_vars.iter().any(|u| u.eq_ignore_ascii_case(v)) {
                self.used_vars.push(v.to_string());
            }
        }
        if let Some(e) = &block.error {
            return Err(e.clone());
        }
        let mut parts = Vec::new();
        let (mut sum, mut last) = (0u64, 0u64);
        for e in &block.items {
            // nginx reads the first value and ignores any after it.
            if e.block.is_some() || e.args.is_empty() {
                return Err(msg(e, "invalid number of the split_clients parameters"));
            }
            let share = if e.name == "*" {
                0
            } else {
                percent(&e.name)
                    .ok_or_else(|| msg(e, format!("invalid percent value \"{}\"", e.name)))?
            };
            sum = if share == 0 { WHOLE } else { sum + share };
            if sum > WHOLE {
                return Err(msg(e, "percent total is greater than 100%"));
            }
            // `ngx_conf_split_clients_block`: each share's upper bound on
            // the hash's range; the part that completes 100 % (or `*`)
            // takes everything above the previous one (bound 0).
            let bound = if share == 0 || sum == WHOLE {
                0
            } else {
                last += share * 0xffff_ffff / WHOLE;
                last
            };
            parts.push((u32::try_from(bound).unwrap_or(u32::MAX), e.args[0].clone()));
        }
        self.declare_variable(&name.to_ascii_lowercase());
        Ok(SplitClientsConf {
            source: arg(d, 0).to_string(),
            var: name.to_ascii_lowercase(),
            parts,
        })
    }
}

/// `ngx_atofp(text, len - 1, 2)` of `N%` / `N.NN%`: hundredths; 0 and more
/// than two decimals are invalid.
fn percent(text: &str) -> Option<u64> {
    let num = text.strip_suffix('%')?;
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if (int.is_empty() && frac.is_empty())
        || frac.len() > 2
        || !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let int: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let frac: u64 = format!("{frac:0<2}").parse().ok()?;
    let v = int.checked_mul(100)?.checked_add(frac)?;
    (v > 0).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::percent;

    #[test]
    fn percents_as_ngx_atofp() {
        assert_eq!(percent("10%"), Some(1000));
        assert_eq!(percent("0.5%"), Some(50));
        assert_eq!(percent("33.33%"), Some(3333));
        assert_eq!(percent(".5%"), Some(50));
        for bad in ["0%", "10", "1.234%", "x%", "%", "-1%"] {
            assert_eq!(percent(bad), None, "{bad}");
        }
    }
}
