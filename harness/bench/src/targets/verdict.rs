//! One target: what it asks, this run's figure for it, and whether it was met (`None`: this run
//! did not measure it, said so rather than guessed).

pub(crate) struct Target {
    pub(crate) text: String,
    pub(crate) figure: Option<String>,
    pub(crate) met: Option<bool>,
}

impl Target {
    pub(crate) fn new(text: impl Into<String>, figure: Option<String>, met: Option<bool>) -> Target {
        Target { text: text.into(), figure, met }
    }

    pub(crate) fn verdict(&self) -> &'static str {
        match self.met {
            Some(true) => "met",
            Some(false) => "MISSED",
            None => "not measured",
        }
    }
}
