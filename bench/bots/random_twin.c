/* random-twin: a uniformly random legal move, in C, for benchmarks that need many matches of
 * two equal bots (bench/stopping.py --ctwins). Build: cc -O2 -o random_twin random_twin.c
 *
 * A random card from hand; if it can capture, a random one of the table cards it can take
 * (naming one of three when it sweeps is legal too). A turned card that can take several:
 * a random one of those offered. The generator is seeded from the `match` line (its opaque
 * id and the seat), so a seat of a match always plays the same way and two seats never share
 * a stream.
 */
#include <stdio.h>
#include <string.h>

#define NAME "random-twin 1.0"
#define MAX_TOKENS 256
static const char *RANKS = "A23456789TJQK";
static const char *SUITS = "cdhs";
static unsigned long long state = 88172645463325252ULL;

static unsigned long long next(void) { /* xorshift64 */
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static void seed_from(const char *text) { /* FNV-1a, then a few rounds to mix */
    unsigned long long h = 1469598103934665603ULL;
    for (const char *p = text; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    state = h ? h : 1;
    for (int i = 0; i < 8; i++) next();
}

static void send(const char *line) {
    printf("%s\n", line);
    fflush(stdout);
}

static int is_card(const char *t) {
    return strlen(t) == 2 && strchr(RANKS, t[0]) && strchr(SUITS, t[1]);
}

static int cards_after(char **tok, int n, const char *key, char **out) {
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(tok[i], key) != 0) continue;
        for (int j = i + 1; j < n && is_card(tok[j]); j++) out[count++] = tok[j];
        break;
    }
    return count;
}

static int sum_value(const char *card) {
    int i = (int)(strchr(RANKS, card[0]) - RANKS);
    return i < 9 ? i + 1 : 0;
}

static int can_capture(const char *card, const char *target) {
    int a = sum_value(card), b = sum_value(target);
    if (a && b) return a + b == 10;
    return card[0] == target[0];
}

int main(void) {
    static char line[16384], copy[16384];
    char *tok[MAX_TOKENS], *a[MAX_TOKENS], *b[MAX_TOKENS], *found[MAX_TOKENS];
    char answer[16];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        memcpy(copy, line, sizeof line);
        int n = 0;
        for (char *t = strtok(line, " "); t && n < MAX_TOKENS; t = strtok(NULL, " ")) tok[n++] = t;
        if (n == 0) continue;
        if (strcmp(tok[0], "chinese-ten") == 0) {
            send("ready " NAME);
        } else if (strcmp(tok[0], "match") == 0) {
            seed_from(copy);
        } else if (strcmp(tok[0], "go") == 0) {
            int nh = cards_after(tok, n, "hand", a), nt = cards_after(tok, n, "table", b);
            if (nh == 0) {
                send("??");
                continue;
            }
            const char *card = a[next() % (unsigned long long)nh];
            int nf = 0;
            for (int j = 0; j < nt; j++)
                if (can_capture(card, b[j])) found[nf++] = b[j];
            if (nf > 0)
                snprintf(answer, sizeof answer, "%s %s", card, found[next() % (unsigned long long)nf]);
            else
                snprintf(answer, sizeof answer, "%s", card);
            send(answer);
        } else if (strcmp(tok[0], "pick") == 0) {
            int no = cards_after(tok, n, "from", a);
            send(no > 0 ? a[next() % (unsigned long long)no] : "??");
        } else if (strcmp(tok[0], "quit") == 0) {
            return 0;
        }
    }
    return 0;
}
