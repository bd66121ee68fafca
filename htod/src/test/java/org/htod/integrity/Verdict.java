package org.htod.integrity;

import java.util.EnumMap;
import java.util.Map;

/**
 * What reading one (damaged) store image came to: refused at open with a typed error, or opened
 * and then, read by read, correct answers, typed errors, wrong answers (by kind), another
 * throwable, or no end at all.
 */
final class Verdict {
    /** The ways an answer can be wrong. */
    enum Wrong {
        /** {@code mapNames()} lacks a map, or lists one the store does not have. */
        NAMES,
        /** {@code size()} differs from the entries the map holds. */
        SIZE,
        /** {@code get} returns null for a key the map holds. */
        GET_ABSENT,
        /** {@code get} returns another value. */
        GET_VALUE,
        /** {@code get} or {@code containsKey} finds a key the map does not hold. */
        PHANTOM,
        /** {@code containsKey} says false for a key the map holds. */
        CONTAINS_FALSE,
        /** Iteration skips a key the map holds. */
        ITER_MISSING,
        /** Iteration returns a key the map does not hold, or one key twice. */
        ITER_EXTRA,
        /** Iteration returns a key with another value. */
        ITER_VALUE,
        /** {@code size()} differs from the number of entries iteration returns. */
        SIZE_VS_ITERATION,
        /** {@code putIfAbsent} of a key the map holds inserts it, or returns another value. */
        PUT_IF_ABSENT
    }

    String refusal;
    /** A refused open that changed the image: what changed. */
    String refusedWrote;
    int typed;
    String firstTyped;
    final Map<Wrong, String> wrong = new EnumMap<>(Wrong.class);
    /** A throwable other than a typed error: the step and the throwable. */
    String other;
    Throwable otherThrowable;
    boolean hang;
    /** Set when the case ran out of time: its thread must stop at the next step. */
    volatile boolean abandoned;

    synchronized void wrong(Wrong kind, String detail) {
        wrong.putIfAbsent(kind, detail);
    }

    synchronized void typed(String step, Throwable e) {
        if (typed++ == 0) {
            firstTyped = step + ": " + e;
        }
    }

    synchronized void other(String step, Throwable t) {
        if (other == null) {
            other = step + ": " + t;
            otherThrowable = t;
        }
    }

    boolean refused() {
        return refusal != null;
    }

    boolean failed() {
        return refusedWrote != null || !wrong.isEmpty() || other != null || hang;
    }

    /** The outcome in one word, for tallies. */
    String outcome() {
        if (hang) {
            return "hang";
        }
        if (other != null) {
            return "other throwable";
        }
        if (!wrong.isEmpty()) {
            return "wrong answer";
        }
        if (refusedWrote != null) {
            return "refused, wrote";
        }
        if (refused()) {
            return "refused";
        }
        return typed > 0 ? "typed errors" : "correct";
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder(outcome());
        if (refused()) {
            s.append("; open refused: ").append(refusal);
        }
        if (refusedWrote != null) {
            s.append("; the refused open wrote: ").append(refusedWrote);
        }
        wrong.forEach((k, d) -> s.append("; ").append(k).append(": ").append(d));
        if (other != null) {
            s.append("; ").append(other);
        }
        if (typed > 0) {
            s.append("; ").append(typed).append(" typed error(s), first ").append(firstTyped);
        }
        return s.toString();
    }
}
