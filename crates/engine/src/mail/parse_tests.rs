use super::*;

/// Every event of `input` fed in two pieces split at `at`, with the bytes
/// each event ended at.
fn imap_events(input: &[u8], at: usize, limit: usize) -> Vec<(usize, ImapEvent)> {
    let mut p = Imap::new(limit);
    let mut out = Vec::new();
    let mut pos = 0;
    for piece in [&input[..at], &input[at..]] {
        let mut off = 0;
        while off < piece.len() {
            let (used, ev) = p.parse(&piece[off..]);
            off += used;
            if let Some(ev) = ev {
                out.push((pos + off, ev));
            }
        }
        pos += piece.len();
    }
    out
}

/// The same events, whatever byte the input is split at.
fn imap_all_splits(input: &[u8]) -> Vec<(usize, ImapEvent)> {
    let whole = imap_events(input, input.len(), 4096);
    for at in 0..input.len() {
        assert_eq!(imap_events(input, at, 4096), whole, "split at {at}");
    }
    whole
}

fn cmd(tag: &str, name: &str, args: &[&[u8]]) -> ImapEvent {
    ImapEvent::Command {
        tag: tag.as_bytes().to_vec(),
        name: name.as_bytes().to_vec(),
        args: args.iter().map(|a| a.to_vec()).collect(),
    }
}

#[test]
fn login_with_atoms() {
    let ev = imap_all_splits(b"a01 login user pass\r\n");
    assert_eq!(ev, vec![(21, cmd("a01", "LOGIN", &[b"user", b"pass"]))]);
}

#[test]
fn quoted_strings_are_unescaped() {
    let ev = imap_all_splits(b"a1 LOGIN \"te\\\\\\\"st\" \"p w\"\r\n");
    assert_eq!(ev[0].1, cmd("a1", "LOGIN", &[b"te\\\"st", b"p w"]));
}

#[test]
fn synchronizing_literals_ask_to_continue() {
    let input = b"a LOGIN {4}\r\nuser {2}\r\npw\r\n";
    let ev = imap_all_splits(input);
    assert_eq!(
        ev,
        vec![
            (13, ImapEvent::Continue),
            (23, ImapEvent::Continue),
            (input.len(), cmd("a", "LOGIN", &[b"user", b"pw"])),
        ]
    );
}

#[test]
fn non_synchronizing_literals_do_not() {
    let ev = imap_all_splits(b"a LOGIN {4+}\r\nu\"e\\ \"p\"\r\n");
    assert_eq!(ev, vec![(24, cmd("a", "LOGIN", &[b"u\"e\\", b"p"]))]);
}

#[test]
fn a_literal_is_not_a_command() {
    let ev = imap_all_splits(b"a03 FOOBAR {10+}\r\ntest test \r\na04 NOOP\r\n");
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0].1, cmd("a03", "FOOBAR", &[b"test test "]));
    assert_eq!(ev[1].1, cmd("a04", "NOOP", &[]));
}

#[test]
fn pipelined_commands_stop_where_each_ends() {
    let ev = imap_all_splits(b"a01 LOGIN u p\na02 LOGOUT\r\n");
    assert_eq!(ev[0], (14, cmd("a01", "LOGIN", &[b"u", b"p"])));
    assert_eq!(ev[1], (26, cmd("a02", "LOGOUT", &[])));
}

#[test]
fn malformed_commands_are_skipped_to_their_line_end() {
    let ev = imap_all_splits(b"a01\r\nb \"x\r\nc1 NO-OP x\r\nd NOOP\r\n");
    let tags: Vec<ImapEvent> = ev.into_iter().map(|(_, e)| e).collect();
    assert_eq!(
        tags,
        vec![
            ImapEvent::Invalid {
                tag: b"a01".to_vec()
            },
            ImapEvent::Invalid { tag: b"b".to_vec() },
            ImapEvent::Invalid {
                tag: b"c1".to_vec()
            },
            cmd("d", "NOOP", &[]),
        ]
    );
}

#[test]
fn a_command_past_the_limit_is_too_long() {
    // The driver closes the connection at the first event.
    let ev = imap_events(b"a LOGIN aaaaaaaaaaaaaaaaaaaa\r\n", 5, 16);
    assert_eq!(ev[0], (17, ImapEvent::TooLong));
    let ev = imap_events(b"a LOGIN {100}\r\n", 3, 16);
    assert_eq!(ev, vec![(15, ImapEvent::TooLong)]);
}

fn line_events(input: &[u8], at: usize, limit: usize) -> Vec<(usize, LineEvent)> {
    let mut p = Lines::new(limit);
    let mut out = Vec::new();
    let mut pos = 0;
    for piece in [&input[..at], &input[at..]] {
        let mut off = 0;
        while off < piece.len() {
            let (used, ev) = p.parse(&piece[off..]);
            off += used;
            if let Some(ev) = ev {
                out.push((pos + off, ev));
            }
        }
        pos += piece.len();
    }
    out
}

#[test]
fn lines_split_anywhere_are_whole() {
    let input = b"MAIL FROM:<a@b> SIZE=1\r\nRCPT TO:<c@d>\nRS";
    let whole = line_events(input, input.len(), 64);
    assert_eq!(
        whole,
        vec![
            (24, LineEvent::Line(b"MAIL FROM:<a@b> SIZE=1".to_vec())),
            (38, LineEvent::Line(b"RCPT TO:<c@d>".to_vec())),
        ]
    );
    for at in 0..input.len() {
        assert_eq!(line_events(input, at, 64), whole, "split at {at}");
    }
}

#[test]
fn a_line_past_the_limit_is_too_long() {
    let ev = line_events(b"HELO aaaaaaaaaa\r\n", 3, 8);
    assert_eq!(ev[0], (9, LineEvent::TooLong));
}
