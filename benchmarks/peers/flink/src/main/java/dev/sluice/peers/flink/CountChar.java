package dev.sluice.peers.flink;

import org.apache.flink.table.functions.ScalarFunction;

/** Nexmark q14's {@code count_char(text, 'c')}: how many times the character occurs in the text. */
public final class CountChar extends ScalarFunction {

    public long eval(String text, String character) {
        if (text == null || character == null || character.isEmpty()) {
            return 0;
        }
        char wanted = character.charAt(0);
        long count = 0;
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) == wanted) {
                count++;
            }
        }
        return count;
    }
}
