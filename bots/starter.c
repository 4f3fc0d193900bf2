/* starter-c: a Chinese Ten starter bot in C99, standard library only.
 * Build:  cc -O2 -o bots/starter.bin bots/starter.c
 * Run:    bots/starter.bin
 * (Benchmarks build it with -DTHINK_US=4000: it then waits 4 ms before each answer to go or pick,
 * a bot that thinks without using a core; and with -DRANDOM_MOVES: a uniformly random legal move
 * and pick, its generator seeded from the `match` line, for twins of equal strength.)
 *
 * Strategy: play the first card in hand that can capture (naming its first target), else the
 * first card. Replace choose_move / choose_pick with your own ideas.
 * Protocol in short (protocol.md): answer `ready <name>` to the greeting, `<card> [<target>]` to
 * `go`, `<target>` to `pick`; stay silent on every other line. stdout carries answers only and is
 * flushed after each line; log to stderr.
 */
#ifdef THINK_US
#define _POSIX_C_SOURCE 199309L /* nanosleep, also under -std=c99 */
#endif
#include <stdio.h>
#include <string.h>
#ifdef THINK_US
#include <time.h>
static void think(void) {
    struct timespec t = {THINK_US / 1000000, (THINK_US % 1000000) * 1000L};
    nanosleep(&t, NULL);
}
#else
static void think(void) {}
#endif

#define NAME "starter-c 1.0"
#define MAX_TOKENS 256
static const char *RANKS = "A23456789TJQK";
static const char *SUITS = "cdhs";

static void send(const char *line) {
    printf("%s\n", line);
    fflush(stdout); /* the referee waits for the line: always flush */
}

static int is_card(const char *t) {
    return strlen(t) == 2 && strchr(RANKS, t[0]) && strchr(SUITS, t[1]);
}

/* Fills out[] with the cards that follow `key` (unknown keys are simply skipped); returns count. */
static int cards_after(char **tok, int n, const char *key, char **out) {
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(tok[i], key) != 0) continue;
        for (int j = i + 1; j < n && is_card(tok[j]); j++) out[count++] = tok[j];
        break;
    }
    return count;
}

/* A=1, 2..9 face value, T/J/Q/K 0 (no sum value). */
static int sum_value(const char *card) {
    int i = (int)(strchr(RANKS, card[0]) - RANKS);
    return i < 9 ? i + 1 : 0;
}

static int can_capture(const char *card, const char *target) {
    int a = sum_value(card), b = sum_value(target);
    if (a && b) return a + b == 10;  /* A+9, 2+8, 3+7, 4+6, 5+5 */
    return card[0] == target[0];     /* T, J, Q, K capture the same rank only */
}

#ifdef RANDOM_MOVES
static unsigned long long state = 88172645463325252ULL;

static int below(int n) { /* xorshift64, then a number in [0, n) */
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (int)(state % (unsigned long long)n);
}

static void seed(char **tok, int n) { /* FNV-1a over the match line's words */
    unsigned long long h = 1469598103934665603ULL;
    for (int i = 0; i < n; i++) {
        for (const char *p = tok[i]; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        h = (h ^ ' ') * 1099511628211ULL;
    }
    state = h ? h : 1;
    for (int i = 0; i < 8; i++) below(2); /* mix */
}

static void choose_move(char **hand, int nh, char **table, int nt, char *answer) {
    char *found[MAX_TOKENS];
    int nf = 0;
    if (nh == 0) {
        sprintf(answer, "??");
        return;
    }
    const char *card = hand[below(nh)];
    for (int j = 0; j < nt; j++)
        if (can_capture(card, table[j])) found[nf++] = table[j];
    if (nf > 0) sprintf(answer, "%s %s", card, found[below(nf)]);
    else sprintf(answer, "%s", card);
}
#else
static int below(int n) { (void)n; return 0; }
static void seed(char **tok, int n) { (void)tok; (void)n; }

static void choose_move(char **hand, int nh, char **table, int nt, char *answer) {
    for (int i = 0; i < nh; i++)
        for (int j = 0; j < nt; j++)
            if (can_capture(hand[i], table[j])) {
                sprintf(answer, "%s %s", hand[i], table[j]);
                return;
            }
    sprintf(answer, "%s", nh > 0 ? hand[0] : "??"); /* nothing captures: it joins the table */
}
#endif

int main(void) {
    static char line[16384];
    char *tok[MAX_TOKENS], *a[MAX_TOKENS], *b[MAX_TOKENS];
    char answer[16];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        int n = 0;
        for (char *t = strtok(line, " "); t && n < MAX_TOKENS; t = strtok(NULL, " ")) tok[n++] = t;
        if (n == 0) continue;
        if (strcmp(tok[0], "chinese-ten") == 0) {
            send("ready " NAME);
        } else if (strcmp(tok[0], "match") == 0) {
            seed(tok, n);
        } else if (strcmp(tok[0], "go") == 0) {
            int nh = cards_after(tok, n, "hand", a), nt = cards_after(tok, n, "table", b);
            choose_move(a, nh, b, nt, answer);
            think();
            send(answer);
        } else if (strcmp(tok[0], "pick") == 0) {
            int no = cards_after(tok, n, "from", a);
            think();
            send(no > 0 ? a[below(no)] : "??");
        } else if (strcmp(tok[0], "forfeit") == 0) {
            fprintf(stderr, "forfeited:%s%s\n", n > 1 ? " " : "", n > 1 ? tok[1] : "");
        } else if (strcmp(tok[0], "quit") == 0) {
            return 0;
        }
        /* match, hand, take, play, turn, score, end and unknown keywords: nothing to answer */
    }
    return 0; /* EOF */
}
