//! `perceptron completions` and `perceptron man`: shell completion scripts
//! and manual pages, generated from the clap definitions of every command,
//! so they always say what `--help` says.

use std::path::PathBuf;

use clap::{Args, CommandFactory};

use super::Cli;
use crate::error::{Error, Result, exit};

const COMPLETION_EXAMPLES: &str = "\
Examples:
  perceptron completions bash > ~/.local/share/bash-completion/completions/perceptron
  perceptron completions zsh > ~/.zfunc/_perceptron      (with fpath+=~/.zfunc in .zshrc)
  perceptron completions fish > ~/.config/fish/completions/perceptron.fish
  source <(perceptron completions bash)                   this shell only

Exit status: 0 success; 1 error (stdout unwritable); 2 bad command line.";

/// Print a shell completion script for perceptron.
///
/// The script completes every command, option and choice (for example
/// `--backend <TAB>`), as generated from the same definitions as `--help`.
#[derive(Args, Debug)]
#[command(after_help = COMPLETION_EXAMPLES)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

const MAN_EXAMPLES: &str = "\
Examples:
  perceptron man | man -l -                 read the manual page
  perceptron man train | man -l -           the page of `perceptron train`
  perceptron man --dir /usr/local/share/man/man1   install every page

Exit status: 0 success; 1 error (a page could not be written); 2 bad command
line (an unknown COMMAND).";

/// Print the manual page (roff), or write one page per command.
///
/// The pages are generated from the same definitions as `--help`: the
/// description, every option with its default and choices, and the examples.
#[derive(Args, Debug)]
#[command(after_help = MAN_EXAMPLES)]
pub struct ManArgs {
    /// The command whose page to print (default: the page of perceptron
    /// itself, which lists the commands).
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,

    /// Write every page (perceptron.1, perceptron-train.1, ...) into DIR,
    /// each atomically, instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
}

pub fn completions(args: &CompletionsArgs) -> Result<i32> {
    let mut cmd = Cli::command();
    // Generated into memory first: clap_complete panics when its writer
    // fails, and stdout may be a closed pipe.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "perceptron", &mut script);
    super::stdout::write_stdout(|out| out.write_all(&script))?;
    Ok(exit::SUCCESS)
}

/// The commands that get a page: perceptron itself, then each command, with
/// the names man expects (`perceptron-train`).
fn pages() -> Vec<clap::Command> {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let mut pages = vec![root.clone()];
    pages.extend(root.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    pages
}

/// A command's page, its footer naming perceptron and its version.
fn page_of(cmd: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(cmd).source(concat!("perceptron ", env!("CARGO_PKG_VERSION")))
}

pub fn man(args: &ManArgs) -> Result<i32> {
    let pages = pages();
    if let Some(dir) = &args.dir {
        // Created where missing, as -o creates an output's directory.
        if dir.exists() && !dir.is_dir() {
            return Err(Error::Usage(format!(
                "--dir {}: not a directory",
                dir.display()
            )));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(dir, "cannot create the manual pages' directory", e))?;
        // Every page or none: a half-updated set would mix versions.
        let batch = crate::output::Batch::begin();
        for page in pages {
            let man = page_of(page);
            crate::output::write_atomic(&dir.join(man.get_filename()), |w| man.render(w))?;
        }
        batch.commit()?;
        return Ok(exit::SUCCESS);
    }
    let page = match &args.command {
        None => pages.into_iter().next(),
        Some(name) => {
            let known: Vec<String> = pages[1..].iter().map(|c| c.get_name().to_owned()).collect();
            let found = pages.into_iter().skip(1).find(|c| c.get_name() == name);
            if found.is_none() {
                return Err(Error::Usage(format!(
                    "no command `{name}`; the commands are {}",
                    known.join(", ")
                )));
            }
            found
        }
    };
    let Some(page) = page else {
        return Err(Error::Usage("no manual page to print".into()));
    };
    let man = page_of(page);
    let mut roff = Vec::new();
    man.render(&mut roff)
        .map_err(|e| Error::io(std::path::Path::new("<memory>"), "cannot render page", e))?;
    super::stdout::write_stdout(|out| out.write_all(&roff))?;
    Ok(exit::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_a_page_named_for_man() {
        let names: Vec<String> = pages()
            .iter()
            .map(|c| clap_mangen::Man::new(c.clone()).get_filename())
            .collect();
        assert_eq!(names[0], "perceptron.1");
        assert!(
            names.contains(&"perceptron-train.1".to_owned()),
            "{names:?}"
        );
        assert!(names.contains(&"perceptron-man.1".to_owned()), "{names:?}");
    }
}
