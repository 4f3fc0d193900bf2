#!/usr/bin/env node
// starter-js: a Chinese Ten starter bot in plain JavaScript (node, no npm packages).
// Run:  node bots/starter.js
//
// Strategy: play the first card in hand that can capture (naming its first target), else the
// first card. Replace chooseMove / choosePick with your own ideas.
// Protocol in short (protocol.md): answer `ready <name>` to the greeting, `<card> [<target>]` to
// `go`, `<target>` to `pick`; stay silent on every other line. stdout carries answers only; log
// with console.error (stderr).
'use strict';
const readline = require('readline');

const NAME = 'starter-js 1.0';
const RANKS = 'A23456789TJQK';
const SUITS = 'cdhs';

function send(line) {
  process.stdout.write(line + '\n'); // writes to a pipe are synchronous on Linux: no buffering
}

function isCard(t) {
  return t.length === 2 && RANKS.includes(t[0]) && SUITS.includes(t[1]);
}

// The cards that follow `key` in a key/value line; unknown keys are simply skipped.
function cardsAfter(tokens, key) {
  const cards = [];
  const i = tokens.indexOf(key);
  if (i < 0) return cards;
  for (let j = i + 1; j < tokens.length && isCard(tokens[j]); j++) cards.push(tokens[j]);
  return cards;
}

// A=1, 2..9 face value, T/J/Q/K 0 (no sum value).
function sumValue(card) {
  const i = RANKS.indexOf(card[0]);
  return i < 9 ? i + 1 : 0;
}

function canCapture(card, target) {
  const a = sumValue(card);
  const b = sumValue(target);
  if (a && b) return a + b === 10; // A+9, 2+8, 3+7, 4+6, 5+5
  return card[0] === target[0]; // T, J, Q, K capture the same rank only
}

function chooseMove(hand, table) {
  for (const card of hand) {
    const target = table.find((t) => canCapture(card, t));
    if (target) return card + ' ' + target;
  }
  return hand[0]; // nothing captures: this card just joins the table
}

function choosePick(offered) {
  return offered[0];
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on('line', (raw) => {
  const tokens = raw.replace(/\r$/, '').split(' ');
  const keyword = tokens[0];
  const rest = tokens.slice(1);
  if (keyword === 'chinese-ten') send('ready ' + NAME);
  else if (keyword === 'go') send(chooseMove(cardsAfter(rest, 'hand'), cardsAfter(rest, 'table')));
  else if (keyword === 'pick') send(choosePick(cardsAfter(rest, 'from')));
  else if (keyword === 'forfeit') console.error('forfeited: ' + raw);
  else if (keyword === 'quit') process.exit(0);
  // match, hand, take, play, turn, score, end and unknown keywords: nothing to answer
});
rl.on('close', () => process.exit(0)); // EOF
