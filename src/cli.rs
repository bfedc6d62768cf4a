//! nginx's command line, parsed the way nginx parses it.
//!
//! Hand-written rather than clap: nginx accepts clustered flags (`-tq`), values
//! glued to their option (`-cfile`) or in the next word (`-c file`), and reports
//! errors in its own words (`invalid option: "x"`, `option "-c" requires file
//! name`). Scripts and unit files written for nginx depend on exactly that.

use std::ffi::OsString;
use std::path::PathBuf;

/// What the command line asks for.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Cli {
    pub help: bool,
    pub version: bool,
    pub version_full: bool,
    pub test: bool,
    pub dump: bool,
    pub quiet: bool,
    pub prefix: Option<PathBuf>,
    pub conf: Option<PathBuf>,
    pub error_log: Option<String>,
    pub globals: Option<String>,
    pub signal: Option<Signal>,
}

/// The signals `-s` sends to the master, named as nginx names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Stop,
    Quit,
    Reopen,
    Reload,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::Stop => "stop",
            Signal::Quit => "quit",
            Signal::Reopen => "reopen",
            Signal::Reload => "reload",
        }
    }

    /// The POSIX signal nginx's master takes for each `-s` word.
    pub fn number(self) -> i32 {
        match self {
            Signal::Stop => libc::SIGTERM,
            Signal::Quit => libc::SIGQUIT,
            Signal::Reopen => libc::SIGUSR1,
            Signal::Reload => libc::SIGHUP,
        }
    }
}

/// Parses the arguments after the program name. The error is nginx's message
/// (without the `peregrine: ` prefix).
pub fn parse(args: &[OsString]) -> Result<Cli, String> {
    let mut cli = Cli::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].to_string_lossy().into_owned();
        i += 1;
        let Some(flags) = arg.strip_prefix('-') else {
            return Err(format!("invalid option: \"{arg}\""));
        };
        let mut chars = flags.char_indices();
        while let Some((pos, c)) = chars.next() {
            match c {
                '?' | 'h' => cli.help = true,
                'v' => cli.version = true,
                'V' => {
                    cli.version = true;
                    cli.version_full = true;
                }
                't' => cli.test = true,
                'T' => {
                    cli.test = true;
                    cli.dump = true;
                }
                'q' => cli.quiet = true,
                'p' | 'c' | 'e' | 'g' | 's' => {
                    let rest = &flags[pos + c.len_utf8()..];
                    let value = if !rest.is_empty() {
                        rest.to_string()
                    } else if i < args.len() {
                        i += 1;
                        args[i - 1].to_string_lossy().into_owned()
                    } else {
                        return Err(missing_value(c));
                    };
                    set_value(&mut cli, c, value)?;
                    break;
                }
                _ => return Err(format!("invalid option: \"{}\"", &flags[pos..])),
            }
            let _ = &mut chars;
        }
    }
    Ok(cli)
}

fn missing_value(c: char) -> String {
    match c {
        'p' => "option \"-p\" requires directory name".into(),
        'c' => "option \"-c\" requires file name".into(),
        'e' => "option \"-e\" requires file name".into(),
        'g' => "option \"-g\" requires parameter".into(),
        _ => "option \"-s\" requires parameter".into(),
    }
}

fn set_value(cli: &mut Cli, c: char, value: String) -> Result<(), String> {
    match c {
        'p' => cli.prefix = Some(PathBuf::from(value)),
        'c' => cli.conf = Some(PathBuf::from(value)),
        'e' => cli.error_log = Some(value),
        'g' => cli.globals = Some(value),
        _ => {
            cli.signal = Some(match value.as_str() {
                "stop" => Signal::Stop,
                "quit" => Signal::Quit,
                "reopen" => Signal::Reopen,
                "reload" => Signal::Reload,
                _ => return Err(format!("invalid option: \"-s {value}\"")),
            })
        }
    }
    Ok(())
}

/// nginx's `-h` text, with Peregrine's defaults and subcommands.
pub const USAGE: &str = "\
Usage: peregrine [-?hvVtTq] [-s signal] [-p prefix]
             [-e filename] [-c filename] [-g directives]
       peregrine bench [options] URL     (load generator, `peregrine bench -h`)
       peregrine tune [options]          (kernel and limits audit, `peregrine tune -h`)

Options:
  -?,-h         : this help
  -v            : show version and exit
  -V            : show version and configure options then exit
  -t            : test configuration and exit
  -T            : test configuration, dump it and exit
  -q            : suppress non-error messages during configuration testing
  -s signal     : send signal to a master process: stop, quit, reopen, reload
  -p prefix     : set prefix path (default: the current directory)
  -e filename   : set error log file (default: logs/error.log)
  -c filename   : set configuration file (default: conf/peregrine.conf)
  -g directives : set global directives out of configuration file
";

#[cfg(test)]
mod tests {
    use super::*;

    fn p(words: &[&str]) -> Result<Cli, String> {
        let args: Vec<OsString> = words.iter().map(OsString::from).collect();
        parse(&args)
    }

    #[test]
    fn clustered_flags_and_glued_values() {
        let cli = p(&["-tq", "-cconf/x.conf", "-p", "/srv/"]).unwrap();
        assert!(cli.test && cli.quiet && !cli.dump);
        assert_eq!(cli.conf, Some(PathBuf::from("conf/x.conf")));
        assert_eq!(cli.prefix, Some(PathBuf::from("/srv/")));
    }

    #[test]
    fn value_ends_the_cluster() {
        let cli = p(&["-qc", "a.conf", "-T"]).unwrap();
        assert!(cli.quiet && cli.test && cli.dump);
        assert_eq!(cli.conf, Some(PathBuf::from("a.conf")));
    }

    #[test]
    fn signals_by_name() {
        assert_eq!(p(&["-s", "reload"]).unwrap().signal, Some(Signal::Reload));
        assert_eq!(p(&["-squit"]).unwrap().signal, Some(Signal::Quit));
        assert_eq!(
            p(&["-s", "kill"]).unwrap_err(),
            "invalid option: \"-s kill\""
        );
    }

    #[test]
    fn nginx_errors() {
        assert_eq!(p(&["-x"]).unwrap_err(), "invalid option: \"x\"");
        assert_eq!(p(&["file"]).unwrap_err(), "invalid option: \"file\"");
        assert_eq!(p(&["-c"]).unwrap_err(), "option \"-c\" requires file name");
        assert_eq!(p(&["-g"]).unwrap_err(), "option \"-g\" requires parameter");
    }

    #[test]
    fn version_flags() {
        let cli = p(&["-V"]).unwrap();
        assert!(cli.version && cli.version_full);
        let cli = p(&["-v"]).unwrap();
        assert!(cli.version && !cli.version_full);
    }
}
