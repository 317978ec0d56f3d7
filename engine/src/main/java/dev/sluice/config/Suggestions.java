package dev.sluice.config;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/** "Did you mean" suggestions for misspelt keys, stage types and enum values. */
public final class Suggestions {

    private Suggestions() {}

    /**
     * The candidate closest to {@code input} by edit distance (counting a swap of two neighbouring
     * letters as one edit, ignoring case, and treating '-' like '_'), if it is close enough to be a
     * plausible typo: none for one-letter names (anything is one edit away), one edit up to four
     * letters, two up to seven, three beyond.
     * Ties go to the alphabetically first candidate, so messages are stable.
     */
    static Optional<String> closest(String input, Collection<String> candidates) {
        String normalizedInput = normalize(input);
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : candidates) {
            if (candidate.equals(input)) {
                continue;
            }
            int distance = distance(normalizedInput, normalize(candidate));
            int allowed = Math.min((candidate.length() + 1) / 3, 3);
            boolean better = distance < bestDistance || distance == bestDistance && candidate.compareTo(best) < 0;
            if (distance <= allowed && better) {
                best = candidate;
                bestDistance = distance;
            }
        }
        return Optional.ofNullable(best);
    }

    /** {@code "; did you mean 'x'?"}, or an empty string when nothing is close. */
    static String didYouMean(String input, Collection<String> candidates) {
        return closest(input, candidates)
                .map(s -> "; did you mean '" + s + "'?")
                .orElse("");
    }

    /**
     * An "unknown X" message with a suggestion and the known names, e.g. {@code unknown key 'batchsize';
     * did you mean 'batch_size'? Known keys: batch_size, count}.
     *
     * @param message the start of the message, e.g. {@code unknown key 'batchsize'}
     * @param input the unknown name
     * @param known the known names, in the order to list them
     * @param knownWhat what the known names are, e.g. {@code keys}
     */
    public static String unknown(String message, String input, Collection<String> known, String knownWhat) {
        String listed = known.isEmpty() ? "none" : String.join(", ", known);
        return closest(input, known)
                .map(s -> message + "; did you mean '" + s + "'? Known " + knownWhat + ": " + listed)
                .orElse(message + ". Known " + knownWhat + ": " + listed);
    }

    private static String normalize(String s) {
        return s.toLowerCase(Locale.ROOT).replace('-', '_');
    }

    /** Optimal string alignment distance: Levenshtein plus transposition of adjacent characters. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
