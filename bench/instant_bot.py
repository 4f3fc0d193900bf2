"""An instant bot for benchmarks: answers every request at once with a legal move.

It keeps no state and does the least work that stays legal: the first card of its hand that
captures (naming its first target), else its first card; for a pick, the first offered card.
``--think MS`` waits that long before each move (a bot that thinks, without using a core).
"""

import sys
import time

PARTNER = {"A": "9", "2": "8", "3": "7", "4": "6", "5": "5", "6": "4", "7": "3", "8": "2",
           "9": "A", "T": "T", "J": "J", "Q": "Q", "K": "K"}


def answer(line: str) -> str | None:
    words = line.split()
    if words[0] == "go":
        t = words.index("table")
        s = words.index("stock")
        hand, table = words[2:t], words[t + 1:s]
        for card in hand:
            want = PARTNER[card[0]]
            for target in table:
                if target[0] == want:
                    return f"{card} {target}"
        return hand[0]
    if words[0] == "pick":
        return words[3]
    if words[0] == "chinese-ten":
        return "ready instant"
    return None


def main() -> None:
    out = sys.stdout
    think = float(sys.argv[sys.argv.index("--think") + 1]) / 1000 if "--think" in sys.argv else 0
    for line in sys.stdin:
        if line.startswith("quit"):
            return
        reply = answer(line)
        if reply is not None:
            if think and not line.startswith("chinese-ten"):
                time.sleep(think)
            out.write(reply + "\n")
            out.flush()


if __name__ == "__main__":
    main()
