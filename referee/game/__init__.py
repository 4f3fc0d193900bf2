"""The game: cards, the rules of Chinese Ten and Red Frog Black Frog, fault kinds, and the
learning encoding of a seat's view.

Pure code, no I/O. Imports nothing else of ``referee``: every other layer builds on it.
"""
