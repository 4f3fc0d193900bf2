// starter-java: a Chinese Ten starter bot in Java 17, standard library only.
// Build once, then run (use this for tournaments: it starts much faster):
//   javac -d bots bots/Starter.java && java -cp bots Starter
// Or, slower to start (compiles on every launch):  java bots/Starter.java
//
// Strategy: play the first card in hand that can capture (naming its first target), else the
// first card. Replace chooseMove / choosePick with your own ideas.
// Protocol in short (protocol.md): answer `ready <name>` to the greeting, `<card> [<target>]` to
// `go`, `<target>` to `pick`; stay silent on every other line. stdout carries answers only and is
// flushed after each line; log with System.err.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;

public class Starter {
    static final String NAME = "starter-java 1.0";
    static final String RANKS = "A23456789TJQK";
    static final String SUITS = "cdhs";

    static void send(String line) {
        System.out.print(line + "\n");
        System.out.flush(); // the referee waits for the line: always flush
    }

    static boolean isCard(String t) {
        return t.length() == 2 && RANKS.indexOf(t.charAt(0)) >= 0 && SUITS.indexOf(t.charAt(1)) >= 0;
    }

    // The cards that follow `key` in a key/value line; unknown keys are simply skipped.
    static List<String> cardsAfter(String[] tokens, String key) {
        List<String> cards = new ArrayList<>();
        for (int i = 0; i < tokens.length; i++) {
            if (!tokens[i].equals(key)) continue;
            for (int j = i + 1; j < tokens.length && isCard(tokens[j]); j++) cards.add(tokens[j]);
            break;
        }
        return cards;
    }

    // A=1, 2..9 face value, T/J/Q/K 0 (no sum value).
    static int sumValue(String card) {
        int i = RANKS.indexOf(card.charAt(0));
        return i < 9 ? i + 1 : 0;
    }

    static boolean canCapture(String card, String target) {
        int a = sumValue(card), b = sumValue(target);
        if (a > 0 && b > 0) return a + b == 10; // A+9, 2+8, 3+7, 4+6, 5+5
        return card.charAt(0) == target.charAt(0); // T, J, Q, K capture the same rank only
    }

    static String chooseMove(List<String> hand, List<String> table) {
        for (String card : hand)
            for (String target : table)
                if (canCapture(card, target)) return card + " " + target;
        return hand.isEmpty() ? "??" : hand.get(0); // nothing captures: it joins the table
    }

    static String choosePick(List<String> offered) {
        return offered.isEmpty() ? "??" : offered.get(0);
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) { // readLine drops "\n" and "\r\n"
            String[] tokens = line.split(" ");
            switch (tokens[0]) {
                case "chinese-ten" -> send("ready " + NAME);
                case "go" -> send(chooseMove(cardsAfter(tokens, "hand"), cardsAfter(tokens, "table")));
                case "pick" -> send(choosePick(cardsAfter(tokens, "from")));
                case "forfeit" -> System.err.println("forfeited: " + line);
                case "quit" -> System.exit(0);
                default -> { } // match, hand, take, play, turn, score, end, unknown: no answer
            }
        }
        System.exit(0); // EOF
    }
}
