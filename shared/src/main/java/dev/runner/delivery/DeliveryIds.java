package dev.runner.delivery;

/**
 * What an identity from outside (an item's externalId, a delivery's webhook-id) may be: it reaches a Postgres index
 * and, for items, every SQS message about the item, so it must fit both. Postgres cannot store NUL; SQS refuses
 * unpaired surrogates and the non-characters U+FFFE and U+FFFF (JSON escapes the other control characters).
 */
public final class DeliveryIds {

    /** The longest id kept: 512 UTF-16 units are at most 1,536 UTF-8 bytes, well inside a btree row. */
    public static final int MAX_LENGTH = 512;

    private DeliveryIds() {}

    /** Null when {@code id} may be used; else why not, naming {@code what} and never echoing the id. */
    public static String problem(String what, String id) {
        if (id.length() > MAX_LENGTH) {
            return what + " is longer than " + MAX_LENGTH + " characters";
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (c == '\u0000') {
                return what + " contains \\u0000, which Postgres cannot store";
            }
            if (c == '\uFFFE' || c == '\uFFFF') {
                return what + " contains a Unicode non-character, which SQS cannot carry";
            }
            if (Character.isHighSurrogate(c) && i + 1 < id.length() && Character.isLowSurrogate(id.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return what + " contains an unpaired surrogate, which SQS cannot carry";
            }
        }
        return null;
    }
}
