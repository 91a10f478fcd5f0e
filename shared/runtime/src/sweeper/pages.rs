//! The one bounded loop every duty runs its statement in: at most `max_pages` pages of `page`
//! rows, stopping at the first page that was not full (nothing is left) or that stalled (a send
//! failed: the next sweep tries again).

use std::future::Future;

use aitasks_store::StoreError;

/// A duty's budget of pages.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pages {
    page: usize,
    left: usize,
    done: bool,
}

impl Pages {
    pub(super) fn new(page: usize, max_pages: usize) -> Pages {
        Pages { page: page.max(1), left: max_pages, done: false }
    }

    /// The rows one statement takes.
    pub(super) fn size(&self) -> usize {
        self.page
    }

    /// Whether another page may run (call once before each).
    pub(super) fn next(&mut self) -> bool {
        if self.done || self.left == 0 {
            return false;
        }
        self.left -= 1;
        true
    }

    /// The page took `taken` rows: a short page means none are left.
    pub(super) fn took(&mut self, taken: usize) {
        self.done |= taken < self.page;
    }

    /// The page took `taken` rows but something failed (a send): stop here for this sweep.
    pub(super) fn stalled(&mut self) {
        self.done = true;
    }
}

/// Run a statement that handles up to a page (`statement(page)`, answering how many rows it
/// took) until a page comes back short or the budget is spent; the rows taken in all.
pub(super) async fn drain<Fut>(
    mut pages: Pages,
    mut statement: impl FnMut(usize) -> Fut,
) -> Result<u64, StoreError>
where
    Fut: Future<Output = Result<u64, StoreError>>,
{
    let mut total = 0;
    while pages.next() {
        let taken = statement(pages.size()).await?;
        pages.took(usize::try_from(taken).unwrap_or(usize::MAX));
        total += taken;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages_run(page: usize, max_pages: usize, rows: &[usize]) -> usize {
        let mut pages = Pages::new(page, max_pages);
        let mut ran = 0;
        let mut rows = rows.iter();
        while pages.next() {
            ran += 1;
            pages.took(*rows.next().unwrap_or(&0));
        }
        ran
    }

    #[test]
    fn a_duty_stops_at_a_short_page_or_at_its_budget() {
        assert_eq!(pages_run(10, 5, &[10, 10, 3]), 3, "the third page was short");
        assert_eq!(pages_run(10, 5, &[10; 100]), 5, "never more than the budget");
        assert_eq!(pages_run(10, 5, &[0]), 1, "an empty first page ends it");
        assert_eq!(pages_run(10, 0, &[10]), 0, "no budget, no page");
        let mut pages = Pages::new(10, 5);
        assert!(pages.next());
        pages.stalled();
        assert!(!pages.next(), "a stalled duty waits for the next sweep");
    }
}
