//! groundguard's native word search (`groundguard_native`): every occurrence of any of a list
//! of words in a text, overlapping ones too, by the `aho-corasick` crate's DFA.
//!
//! It does what `guard.prepare.injection._Words` does with pyahocorasick's trie (about 18 ns
//! a character there, about 1 here) and returns the same pairs: `(word index, start)`, the
//! start in characters (code points), as Python counts them.
//!
//! It holds the GIL for the whole call, on purpose: a call is microseconds long, and a
//! search that released the GIL on every call waited for it again behind any busy thread
//! (docs/performance.md: the service's p99 outside the judge call went from ~45 to ~130 ms
//! with `ahocorasick-rs`, which releases it).

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The words, searched together; `find` gives every occurrence of each.
#[pyclass(frozen, module = "groundguard_native")]
struct Words {
    automaton: AhoCorasick,
    /// each word's length in characters (its start is its end less this)
    chars: Vec<usize>,
}

#[pymethods]
impl Words {
    #[new]
    fn new(words: Vec<String>) -> PyResult<Self> {
        if words.iter().any(String::is_empty) {
            return Err(PyValueError::new_err(
                "an empty word would occur everywhere",
            ));
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&words)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let chars = words.iter().map(|w| w.chars().count()).collect();
        Ok(Words { automaton, chars })
    }

    /// `(word index, start)` of every occurrence in `text`, overlapping ones too, in the
    /// order their ends come (the start in characters).
    fn find(&self, text: &str) -> Vec<(usize, usize)> {
        let haystack = text.as_bytes();
        let mut found = Vec::new();
        if text.is_ascii() {
            for m in self.automaton.find_overlapping_iter(haystack) {
                found.push((m.pattern().as_usize(), m.start()));
            }
            return found;
        }
        // bytes to characters: count the characters up to each end, from the last one (the
        // ends come in order)
        let (mut byte, mut char) = (0usize, 0usize);
        for m in self.automaton.find_overlapping_iter(haystack) {
            let end = m.end();
            if end < byte {
                (byte, char) = (0, 0); // not in order after all: count from the start
            }
            char += characters(&haystack[byte..end]);
            byte = end;
            let word = m.pattern().as_usize();
            found.push((word, char - self.chars[word]));
        }
        found
    }

    fn __len__(&self) -> usize {
        self.chars.len()
    }
}

/// The characters of a UTF-8 piece cut at character boundaries: its bytes that do not
/// continue a character.
fn characters(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

#[pymodule]
fn groundguard_native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Words>()?;
    Ok(())
}
