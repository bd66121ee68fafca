package org.htod.integrity;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Counts of a fuzz run: outcomes, outcomes per kind of damage, and each failure by what went
 * wrong and the structure the damage hit, with the first case of each to replay.
 */
final class FuzzTally {
    private final Map<String, Integer> outcomes = new TreeMap<>();
    private final Map<String, Integer> byDamage = new TreeMap<>();
    private final Map<String, Integer> byMechanism = new TreeMap<>();
    private final Map<String, Cell> cells = new TreeMap<>();
    private final List<String> firstFailures = new ArrayList<>();
    private final List<String> firstWrites = new ArrayList<>();
    private final Map<String, Integer> writesByStructure = new TreeMap<>();
    private int cases;
    private int failures;
    private int typedDuringReads;

    private static final class Cell {
        int count;
        String first;
    }

    /**
     * Counts one case; {@code id} names it in one line (case number and image), {@code
     * description} in full (damage and verdict).
     */
    synchronized void add(Damage d, String primary, Verdict v, String id, String description) {
        cases++;
        String outcome = v.outcome();
        outcomes.merge(outcome, 1, Integer::sum);
        byDamage.merge(String.format("%-12s %s", d.kind, outcome), 1, Integer::sum);
        if (!v.refused()) {
            typedDuringReads += v.typed;
        }
        if (!v.failed()) {
            return;
        }
        failures++;
        if (v.refusedWrote != null && v.wrong.isEmpty() && v.other == null && !v.hang) {
            writesByStructure.merge(primary, 1, Integer::sum);
            if (firstWrites.size() < 3) {
                firstWrites.add(description);
            }
            cell("REFUSED_OPEN_WROTE", primary, id + ": " + v.refusedWrote);
            return;
        }
        byMechanism.merge(mechanism(primary), 1, Integer::sum);
        for (Verdict.Wrong w : Verdict.Wrong.values()) {
            if (v.wrong.containsKey(w)) {
                cell(w.toString(), primary, id + ": " + v.wrong.get(w));
            }
        }
        if (v.other != null) {
            cell("OTHER " + v.otherThrowable.getClass().getSimpleName(), primary, id + ": " + v.other);
        }
        if (v.hang) {
            cell("HANG", primary, id);
        }
        if (firstFailures.size() < 12) {
            firstFailures.add(description);
        }
    }

    private void cell(String what, String primary, String first) {
        Cell c = cells.computeIfAbsent(String.format("%-26s %-26s", what, primary), k -> new Cell());
        if (c.count++ == 0) {
            c.first = first.length() > 220 ? first.substring(0, 217) + "..." : first;
        }
    }

    synchronized int failures() {
        return failures;
    }

    synchronized int cases() {
        return cases;
    }

    /** Which mechanism of the integrity issue a damaged structure belongs to. */
    static String mechanism(String structure) {
        if (structure.startsWith("entry.hash") || structure.startsWith("entry.expiry")) {
            return "2: entry hash or expiry";
        }
        if (structure.startsWith("entry.next") || structure.startsWith("bucket.")) {
            return "3: bucket slots and links";
        }
        if (structure.startsWith("entry.") && !structure.equals("entry.dead")) {
            return "1: entry key, value, lengths, ids, CRC";
        }
        if (structure.startsWith("table.header")) {
            return "4: table header";
        }
        if (structure.startsWith("catalog.")) {
            return "5: catalog";
        }
        if (structure.startsWith("superblock")) {
            return "6: superblock";
        }
        return "7 and others: " + structure;
    }

    synchronized String report(String head) {
        StringBuilder s = new StringBuilder(head).append(String.format("%n"));
        s.append(String.format("  cases %d; typed errors during reads of opened stores %d%n", cases, typedDuringReads));
        outcomes.forEach((k, n) -> s.append(String.format("  %-18s %6d%n", k, n)));
        s.append(String.format("outcomes by damage:%n"));
        byDamage.forEach((k, n) -> s.append(String.format("  %-40s %6d%n", k, n)));
        if (failures == 0) {
            return s.toString();
        }
        s.append(String.format("wrong answers, other throwables and hangs, by mechanism of the structure damaged:%n"));
        byMechanism.forEach((k, n) -> s.append(String.format("  %-60s %6d%n", k, n)));
        s.append(String.format("failures by what went wrong and structure hit (count, first case):%n"));
        cells.forEach((k, c) -> s.append(String.format("  %s %5d  %s%n", k, c.count, c.first)));
        s.append(String.format("refused opens that wrote to the store, by structure damaged:%n"));
        writesByStructure.forEach((k, n) -> s.append(String.format("  %-40s %6d%n", k, n)));
        s.append(String.format("first cases with a wrong answer, another throwable or a hang, in full:%n"));
        firstFailures.forEach(f -> s.append("  ").append(f).append(String.format("%n")));
        s.append(String.format("first refused opens that wrote, in full:%n"));
        firstWrites.forEach(f -> s.append("  ").append(f).append(String.format("%n")));
        return s.toString();
    }
}
