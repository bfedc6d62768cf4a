//! Reusable slots for the per-worker caches (open file cache, memory
//! cache): their path maps hold indices into a `Vec<Option<T>>`, so a
//! lookup yields a copyable index and the entry can be read, updated and
//! returned without probing the map again.

/// Puts `value` in a free slot (or a new one) and returns its index.
pub(crate) fn put<T>(slots: &mut Vec<Option<T>>, free: &mut Vec<usize>, value: T) -> usize {
    match free.pop() {
        Some(i) if i < slots.len() => {
            slots[i] = Some(value);
            i
        }
        _ => {
            slots.push(Some(value));
            slots.len() - 1
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reuses_freed_slots_first() {
        let (mut slots, mut free) = (Vec::new(), Vec::new());
        assert_eq!(super::put(&mut slots, &mut free, 'a'), 0);
        assert_eq!(super::put(&mut slots, &mut free, 'b'), 1);
        slots[0] = None;
        free.push(0);
        assert_eq!(super::put(&mut slots, &mut free, 'c'), 0);
        assert_eq!(slots, [Some('c'), Some('b')]);
        assert_eq!(super::put(&mut slots, &mut free, 'd'), 2);
    }
}
