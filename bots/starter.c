/* starter-c: a Chinese Ten starter bot in C99, standard library only.
 * Build:  cc -O2 -o bots/starter.bin bots/starter.c
 * Run:    bots/starter.bin
 * (Benchmarks build it with -DTHINK_US=4000: it then waits 4 ms before each answer to go or pick,
 * a bot that thinks without using a core.)
 *
 * Strategy: play the first card in hand that can capture (naming its first target), else the
 * first card. Replace choose_move / choose_pick with your own ideas.
 * Protocol in short (protocol.md): answer `ready <name>` to the greeting, `<card> [<target>]` to
 * `go`, `<target>` to `pick`; stay silent on every other line. stdout carries answers only and is
 * flushed after each line; log to stderr.
 */
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

static void choose_move(char **hand, int nh, char **table, int nt, char *answer) {
    for (int i = 0; i < nh; i++)
        for (int j = 0; j < nt; j++)
            if (can_capture(hand[i], table[j])) {
                sprintf(answer, "%s %s", hand[i], table[j]);
                return;
            }
    sprintf(answer, "%s", nh > 0 ? hand[0] : "??"); /* nothing captures: it joins the table */
}

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
        } else if (strcmp(tok[0], "go") == 0) {
            int nh = cards_after(tok, n, "hand", a), nt = cards_after(tok, n, "table", b);
            choose_move(a, nh, b, nt, answer);
            think();
            send(answer);
        } else if (strcmp(tok[0], "pick") == 0) {
            int no = cards_after(tok, n, "from", a);
            think();
            send(no > 0 ? a[0] : "??");
        } else if (strcmp(tok[0], "forfeit") == 0) {
            fprintf(stderr, "forfeited:%s%s\n", n > 1 ? " " : "", n > 1 ? tok[1] : "");
        } else if (strcmp(tok[0], "quit") == 0) {
            return 0;
        }
        /* match, hand, take, play, turn, score, end and unknown keywords: nothing to answer */
    }
    return 0; /* EOF */
}
