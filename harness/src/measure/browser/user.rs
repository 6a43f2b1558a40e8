//! The browser arguments and prefs the user adds on the command line (`--browser-arg`,
//! `--browser-pref`), each `[BROWSER=]…`: parsed once for `harness run` and `harness verify`, then
//! picked out per browser and added after harness's own [`BrowserFlags`].

use super::{BrowserFlags, BrowserKind};
use serde_json::Value;

/// One `--browser-arg [BROWSER=]ARG`.
#[derive(Debug, Clone, PartialEq)]
pub struct UserArg {
    /// The browser it is for; `None`: every browser of the run.
    pub browser: Option<BrowserKind>,
    /// The command-line argument, such as `--enable-features=Vulkan`.
    pub arg: String,
    /// The value as given, for results.json and `--replay`.
    pub given: String,
}

/// One `--browser-pref [BROWSER=]NAME=VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct UserPref {
    /// The browser it is for; `None`: every browser of the run.
    pub browser: Option<BrowserKind>,
    /// The pref's name, such as `dom.webgpu.enabled`.
    pub name: String,
    /// A JSON bool or number when the text is one, else a string.
    pub value: Value,
    /// The value as given, for results.json and `--replay`.
    pub given: String,
}

/// Why a `--browser-arg` or `--browser-pref` value cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UserFlagError {
    /// `KEY=…` where KEY is neither a browser nor the start of a flag.
    #[error("`{key}` is not a browser harness drives; the browsers are {known}. Write {examples}, or {rest} alone for every browser of the run", known = known_browsers(), examples = BrowserKind::ALL.map(|b| format!("{}={rest}", b.spec().key)).join(" or "))]
    UnknownBrowser {
        /// The text before the first `=`.
        key: String,
        /// The text after it.
        rest: String,
    },
    /// A pref without `=VALUE` or without a name.
    #[error("`{0}` is not [BROWSER=]NAME=VALUE: give the pref's name, `=` and its value, such as firefox=dom.webgpu.enabled=true or chrome=download.prompt_for_download=false")]
    NotNameValue(String),
    /// Nothing after the browser prefix, or nothing at all.
    #[error("`{0}` names no argument: write BROWSER=ARG, such as chrome=--enable-features=Vulkan, or ARG alone for every browser")]
    Empty(String),
}

/// The browser keys, comma-separated, for messages.
fn known_browsers() -> String {
    BrowserKind::ALL.map(|b| b.spec().key).join(", ")
}

/// The browser whose key is `key`.
fn browser_for_key(key: &str) -> Option<BrowserKind> {
    BrowserKind::ALL.into_iter().find(|b| b.spec().key == key)
}

/// Splits `BROWSER=REST` into the browser and REST; anything else is for every browser, whole.
/// Also returns the text before the first `=` when it is not a browser key.
fn split_browser(s: &str) -> (Option<BrowserKind>, &str, Option<&str>) {
    match s.split_once('=') {
        Some((key, rest)) => match browser_for_key(key) {
            Some(b) => (Some(b), rest, None),
            None => (None, s, Some(key)),
        },
        None => (None, s, None),
    }
}

/// Parses a `--browser-arg` value: `chrome=--x=y` is `--x=y` for Chrome, `--x` is for every
/// browser. `KEY=…` with a KEY that is neither a browser nor a flag (`safari=--x`) is an error.
pub fn parse_arg(s: &str) -> Result<UserArg, UserFlagError> {
    let (browser, arg, other_key) = split_browser(s);
    if let Some(key) = other_key.filter(|k| !k.starts_with('-')) {
        return Err(UserFlagError::UnknownBrowser { key: key.to_string(), rest: s[key.len() + 1..].to_string() });
    }
    if arg.is_empty() {
        return Err(UserFlagError::Empty(s.to_string()));
    }
    Ok(UserArg { browser, arg: arg.to_string(), given: s.to_string() })
}

/// Parses a `--browser-pref` value: `firefox=a.b=true` is the pref `a.b` (bool true) for
/// Firefox, `a.b=3` is for every browser. A VALUE that is a JSON bool or number becomes one, a
/// JSON string (`'"3"'`) its text, anything else stays the text as given.
pub fn parse_pref(s: &str) -> Result<UserPref, UserFlagError> {
    let (browser, rest, other_key) = split_browser(s);
    // Pref names have dots; a plain word followed by NAME=VALUE is a mistyped browser.
    if let Some(key) = other_key.filter(|k| !k.is_empty() && !k.contains('.') && s[k.len() + 1..].contains('=')) {
        return Err(UserFlagError::UnknownBrowser { key: key.to_string(), rest: s[key.len() + 1..].to_string() });
    }
    let (name, value) = rest.split_once('=').ok_or_else(|| UserFlagError::NotNameValue(s.to_string()))?;
    if name.is_empty() {
        return Err(UserFlagError::NotNameValue(s.to_string()));
    }
    Ok(UserPref { browser, name: name.to_string(), value: pref_value(value), given: s.to_string() })
}

fn pref_value(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(v @ (Value::Bool(_) | Value::Number(_) | Value::String(_))) => v,
        _ => Value::String(text.to_string()),
    }
}

/// The user's flags for `browser`, in the order given: the arguments and prefs without a
/// browser prefix and those for `browser`. A later pref of the same name replaces an earlier one.
pub fn flags_for(args: &[UserArg], prefs: &[UserPref], browser: BrowserKind) -> BrowserFlags {
    let applies = |b: Option<BrowserKind>| b.is_none_or(|b| b == browser);
    let mut flags = BrowserFlags {
        args: args.iter().filter(|a| applies(a.browser)).map(|a| a.arg.clone()).collect(),
        prefs: Vec::new(),
    };
    flags.merge(&BrowserFlags {
        args: Vec::new(),
        prefs: prefs.iter().filter(|p| applies(p.browser)).map(|p| (p.name.clone(), p.value.clone())).collect(),
    });
    flags
}

/// One warning for each argument or pref that no browser of the run (`browsers`) gets.
pub fn unused(args: &[UserArg], prefs: &[UserPref], browsers: &[BrowserKind]) -> Vec<String> {
    let flagged = args
        .iter()
        .map(|a| ("--browser-arg", a.browser, &a.given))
        .chain(prefs.iter().map(|p| ("--browser-pref", p.browser, &p.given)));
    flagged
        .filter_map(|(flag, browser, given)| match browser {
            None if browsers.is_empty() => Some(format!("{flag} {given}: this run starts no browser, so it is not used")),
            Some(b) if !browsers.contains(&b) => {
                Some(format!("{flag} {given}: {} is not among this run's browsers, so it is not used", b.spec().key))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::browser::LaunchOptions;
    use serde_json::json;

    fn options() -> LaunchOptions {
        LaunchOptions { binary: Some("/opt/browser".into()), headless: true, profile_dir: Some("/tmp/profile".into()), webnn: false, gpu: false, nvidia: false }
    }

    #[test]
    fn an_arg_may_name_its_browser_and_keep_its_own_equals_signs() {
        let a = parse_arg("chrome=--x=y").unwrap();
        assert_eq!((a.browser, a.arg.as_str(), a.given.as_str()), (Some(BrowserKind::Chrome), "--x=y", "chrome=--x=y"));
        let a = parse_arg("--x").unwrap();
        assert_eq!((a.browser, a.arg.as_str()), (None, "--x"));
        let a = parse_arg("--enable-features=Vulkan").unwrap();
        assert_eq!((a.browser, a.arg.as_str()), (None, "--enable-features=Vulkan"));
        let a = parse_arg("firefox=-headless").unwrap();
        assert_eq!((a.browser, a.arg.as_str()), (Some(BrowserKind::Firefox), "-headless"));
        assert_eq!(parse_arg("edge=--user-agent=a=b").unwrap().arg, "--user-agent=a=b");
    }

    #[test]
    fn an_unknown_browser_prefix_names_the_known_browsers() {
        let e = parse_arg("safari=--x").unwrap_err();
        assert!(matches!(&e, UserFlagError::UnknownBrowser { key, .. } if key == "safari"), "{e:?}");
        let s = e.to_string();
        assert!(s.contains("`safari`") && s.contains("chrome, firefox, edge"), "{s}");
        assert!(s.contains("Write chrome=--x or firefox=--x or edge=--x, or --x alone"), "{s}");
        let e = parse_pref("safari=a.b=true").unwrap_err().to_string();
        assert!(e.contains("`safari`") && e.contains("chrome, firefox, edge") && e.contains("firefox=a.b=true"), "{e}");
        assert!(matches!(parse_arg("chrome="), Err(UserFlagError::Empty(_))));
        assert!(matches!(parse_arg(""), Err(UserFlagError::Empty(_))));
    }

    #[test]
    fn pref_values_are_bools_numbers_or_strings() {
        let p = parse_pref("firefox=a.b=true").unwrap();
        assert_eq!((p.browser, p.name.as_str(), &p.value), (Some(BrowserKind::Firefox), "a.b", &json!(true)));
        assert_eq!(parse_pref("firefox=a.b=3").unwrap().value, json!(3));
        assert!(parse_pref("firefox=a.b=3").unwrap().value.is_i64());
        assert_eq!(parse_pref("firefox=a.b=-1.5").unwrap().value, json!(-1.5));
        assert_eq!(parse_pref("firefox=a.b=hello").unwrap().value, json!("hello"));
        assert_eq!(parse_pref("firefox=a.b=\"3\"").unwrap().value, json!("3"));
        assert_eq!(parse_pref("firefox=a.b=null").unwrap().value, json!("null"));
        assert_eq!(parse_pref("firefox=a.b=").unwrap().value, json!(""));
        let p = parse_pref("general.useragent.override=x=y").unwrap();
        assert_eq!((p.browser, p.name.as_str(), &p.value), (None, "general.useragent.override", &json!("x=y")));
    }

    #[test]
    fn a_pref_without_a_value_asks_for_name_equals_value() {
        for bad in ["firefox=novalue", "novalue", "firefox==1", "=1"] {
            let e = parse_pref(bad).unwrap_err();
            assert_eq!(e, UserFlagError::NotNameValue(bad.into()), "{bad}");
            let s = e.to_string();
            assert!(s.contains("NAME=VALUE") && s.contains("firefox=dom.webgpu.enabled=true"), "{s}");
        }
    }

    #[test]
    fn each_browser_gets_its_own_and_the_unprefixed_flags_in_order() {
        let args: Vec<UserArg> = ["--all", "chrome=--c", "firefox=-f"].map(|a| parse_arg(a).unwrap()).into();
        let prefs: Vec<UserPref> = ["a.b=1", "firefox=a.b=2", "chrome=c.d=x"].map(|p| parse_pref(p).unwrap()).into();
        let chrome = flags_for(&args, &prefs, BrowserKind::Chrome);
        assert_eq!(chrome.args, ["--all", "--c"]);
        assert_eq!(chrome.prefs, [("a.b".to_string(), json!(1)), ("c.d".to_string(), json!("x"))]);
        let firefox = flags_for(&args, &prefs, BrowserKind::Firefox);
        assert_eq!(firefox.args, ["--all", "-f"]);
        assert_eq!(firefox.prefs, [("a.b".to_string(), json!(2))]);

        let warnings = unused(&args, &prefs, &[BrowserKind::Chrome]);
        assert_eq!(warnings, ["--browser-arg firefox=-f: firefox is not among this run's browsers, so it is not used", "--browser-pref firefox=a.b=2: firefox is not among this run's browsers, so it is not used"]);
        assert_eq!(unused(&args, &prefs, &[]).len(), 6);
        assert!(unused(&args, &prefs, &BrowserKind::ALL).is_empty());
    }

    #[test]
    fn chrome_gets_the_users_args_after_its_own_and_prefs_in_its_options() {
        let spec = BrowserKind::Chrome.spec();
        let user = flags_for(&[parse_arg("chrome=--user-agent=ua").unwrap()], &[parse_pref("chrome=a.b=true").unwrap()], BrowserKind::Chrome);
        let mut flags = (spec.flags)(&options());
        let defaults = flags.args.clone();
        flags.merge(&user);
        let caps = Value::Object((spec.capabilities)(&options(), &flags));
        let args: Vec<&str> = caps["goog:chromeOptions"]["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert_eq!(args.last(), Some(&"--user-agent=ua"), "{args:?}");
        assert_eq!(args[..args.len() - 1], defaults.iter().map(String::as_str).collect::<Vec<_>>()[..]);
        assert_eq!(caps["goog:chromeOptions"]["prefs"], json!({ "a.b": true }));
        // Edge shares Chrome's capabilities, under its own key.
        let edge = BrowserKind::Edge.spec();
        let caps = Value::Object((edge.capabilities)(&options(), &flags));
        assert_eq!(caps["ms:edgeOptions"]["prefs"], json!({ "a.b": true }));
        // Without user prefs Chrome's options carry none.
        let caps = Value::Object((spec.capabilities)(&options(), &(spec.flags)(&options())));
        assert!(caps["goog:chromeOptions"].get("prefs").is_none(), "{caps}");
    }

    #[test]
    fn a_firefox_user_pref_overrides_the_default_of_the_same_name() {
        let spec = BrowserKind::Firefox.spec();
        let prefs = ["firefox=gfx.webgpu.ignore-blocklist=false", "firefox=general.useragent.override=agent/1"].map(|p| parse_pref(p).unwrap());
        let user = flags_for(&[parse_arg("firefox=-safe-mode").unwrap()], &prefs, BrowserKind::Firefox);
        let mut flags = (spec.flags)(&options());
        let before = flags.prefs.len();
        flags.merge(&user);
        assert_eq!(flags.prefs.len(), before + 1, "replaced, not repeated: {:?}", flags.prefs);
        let caps = Value::Object((spec.capabilities)(&options(), &flags));
        let options = &caps["moz:firefoxOptions"];
        assert_eq!(options["prefs"]["gfx.webgpu.ignore-blocklist"], false);
        assert_eq!(options["prefs"]["general.useragent.override"], "agent/1");
        assert_eq!(options["prefs"]["dom.webgpu.enabled"], true);
        assert_eq!(options["args"], json!(["-headless", "-profile", "/tmp/profile", "-safe-mode"]));
        assert!(flags.describe().contains(&"gfx.webgpu.ignore-blocklist=false".to_string()));
    }
}
