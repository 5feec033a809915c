//! clap's adapter for the closed sets of choices defined below `cli` (`core::choice`): help
//! lists them in the command line's kebab-case, and any spelling `Choice` accepts is read.

use std::marker::PhantomData;

use clap::builder::{PossibleValue, TypedValueParser};

use crate::core::choice::Choice;

/// `#[arg(value_parser = choice::<Strategy>())]`
pub(crate) fn choice<T: Choice>() -> ChoiceParser<T> {
    ChoiceParser(PhantomData)
}

#[derive(Clone, Copy)]
pub(crate) struct ChoiceParser<T>(PhantomData<T>);

impl<T: Choice> TypedValueParser for ChoiceParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        T::parse_choice(&text).map_err(|message| {
            let mut e = clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!(
                    "{}{message}\n",
                    arg.map(|a| format!("{a}: ")).unwrap_or_default()
                ),
            );
            e = e.with_cmd(cmd);
            e
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            T::ALL
                .iter()
                .map(|v| PossibleValue::new(v.name().replace('_', "-"))),
        ))
    }
}
