//! starter-rust: a Chinese Ten starter bot in Rust, standard library only.
//!
//! Build (once, before checking or playing; see "Compiled bots" in docs/writing-a-bot.md):
//!     cargo build --release --manifest-path bots/starter-rust/Cargo.toml
//! Run:
//!     bots/starter-rust/target/release/starter-rust
//!
//! Strategy: play the first card in hand that can capture (naming its first target), else the
//! first card. Replace `choose_move` / `choose_pick` with your own ideas.
//! Protocol in short (protocol.md): answer `ready <name>` to the greeting, `<card> [<target>]` to
//! `go`, `<target>` to `pick`; stay silent on every other line. stdout carries answers only and
//! is flushed after each line; log to stderr.

use std::io::{self, BufRead, Write};

const NAME: &str = "starter-rust 1.0";
const RANKS: &str = "A23456789TJQK";
const SUITS: &str = "cdhs";

fn is_card(token: &str) -> bool {
    let b = token.as_bytes();
    b.len() == 2 && RANKS.contains(b[0] as char) && SUITS.contains(b[1] as char)
}

/// The cards that follow `key` in a line's tokens (an unknown key is simply absent).
fn cards_after<'a>(tokens: &[&'a str], key: &str) -> Vec<&'a str> {
    match tokens.iter().position(|t| *t == key) {
        Some(i) => tokens[i + 1..].iter().take_while(|t| is_card(t)).copied().collect(),
        None => Vec::new(),
    }
}

/// A=1, 2..9 face value, T/J/Q/K 0 (no sum value).
fn sum_value(card: &str) -> u32 {
    let i = RANKS.find(&card[..1]).unwrap_or(12) as u32;
    if i < 9 { i + 1 } else { 0 }
}

fn can_capture(card: &str, target: &str) -> bool {
    let (a, b) = (sum_value(card), sum_value(target));
    if a > 0 && b > 0 {
        a + b == 10 // A+9, 2+8, 3+7, 4+6, 5+5
    } else {
        card[..1] == target[..1] // T, J, Q, K capture the same rank only
    }
}

fn choose_move(hand: &[&str], table: &[&str]) -> String {
    for card in hand {
        if let Some(target) = table.iter().find(|t| can_capture(card, t)) {
            return format!("{card} {target}");
        }
    }
    // Nothing captures: the card joins the table.
    hand.first().map_or_else(|| "??".to_string(), |c| c.to_string())
}

fn choose_pick(options: &[&str]) -> String {
    options.first().map_or_else(|| "??".to_string(), |c| c.to_string())
}

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    let mut send = |line: &str| -> io::Result<()> {
        writeln!(out, "{line}")?;
        out.flush() // the referee waits for the line: always flush
    };
    for line in stdin.lock().lines() {
        let line = line?;
        let tokens: Vec<&str> = line.split_whitespace().collect();
        match tokens.first().copied() {
            Some("chinese-ten") => send(&format!("ready {NAME}"))?,
            Some("go") => send(&choose_move(&cards_after(&tokens, "hand"),
                                            &cards_after(&tokens, "table")))?,
            Some("pick") => send(&choose_pick(&cards_after(&tokens, "from")))?,
            Some("forfeit") => eprintln!("forfeited: {}", tokens[1..].join(" ")),
            Some("quit") => return Ok(()),
            // match, hand, take, play, turn, score, end and unknown keywords: nothing to answer
            _ => {}
        }
    }
    Ok(()) // end of input
}
