//! A deterministic, HTML-like test body (no fixture file to ship): a page
//! of nested tags, attributes, prose drawn from a fixed vocabulary and
//! numbers, from a fixed-seed xorshift generator. Its compressibility is
//! close to real pages (nginx level 6 gives about 25% of the input).

const WORDS: [&str; 48] = [
    "the",
    "server",
    "request",
    "response",
    "header",
    "compression",
    "location",
    "static",
    "file",
    "content",
    "type",
    "length",
    "encoding",
    "window",
    "memory",
    "level",
    "buffer",
    "stream",
    "client",
    "proxy",
    "cache",
    "worker",
    "connection",
    "timeout",
    "keepalive",
    "upstream",
    "module",
    "filter",
    "of",
    "and",
    "to",
    "in",
    "is",
    "for",
    "with",
    "on",
    "by",
    "this",
    "that",
    "from",
    "be",
    "are",
    "as",
    "at",
    "an",
    "or",
    "it",
    "we",
];
const TAGS: [&str; 8] = ["p", "li", "span", "td", "h2", "div", "em", "a"];
const CLASSES: [&str; 6] = ["nav", "item", "content", "footer", "highlight", "col-md-4"];

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// About `size` bytes of HTML, always the same for the same `size`.
pub fn html(size: usize) -> Vec<u8> {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Test page</title></head>\n<body>\n",
    );
    while s.len() < size {
        let tag = TAGS[rng.below(TAGS.len())];
        let class = CLASSES[rng.below(CLASSES.len())];
        let id = rng.next() % 10_000;
        s.push_str(&format!("<{tag} class=\"{class}\" id=\"e{id}\">"));
        for i in 0..3 + rng.below(25) {
            if i > 0 {
                s.push(' ');
            }
            if rng.below(12) == 0 {
                s.push_str(&(rng.next() % 100_000).to_string());
            } else {
                s.push_str(WORDS[rng.below(WORDS.len())]);
            }
        }
        s.push_str(&format!("</{tag}>\n"));
    }
    s.push_str("</body>\n</html>\n");
    s.into_bytes()
}
