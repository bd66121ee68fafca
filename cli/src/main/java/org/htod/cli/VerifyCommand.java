package org.htod.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.htod.HtodStore;
import org.htod.StoreStats;
import org.htod.VerifyReport;
import org.htod.core.CorruptStoreException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "verify", description = "Reads the whole store and checks every checksum, chain, count and block;"
        + " prints each problem with its offset and exits 1 if there is any.")
final class VerifyCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the store file")
    Path store;

    @Option(names = "--quiet", description = "no progress bar")
    boolean quiet;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        Stores.mustExist(store);
        PrintWriter out = spec.commandLine().getOut();
        HtodStore s;
        try {
            s = Stores.open(store, quiet);
        } catch (CorruptStoreException e) {
            // Damage that stops the open is a finding of verify, not a failure of the tool.
            return print(new VerifyReport(0, 0, 0, 0, List.of(new VerifyReport.Problem(e.offset(), e.getMessage()))),
                    null, out);
        }
        int code;
        try {
            VerifyReport r;
            try (Bar bar = Bar.of("verify", "blocks", quiet)) {
                r = s.verify(bar);
            }
            code = print(r, r.ok() ? s.stats() : null, out);
        } catch (RuntimeException e) {
            try {
                s.close();
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        // Printed before the close, which can fail for the very damage found (in log mode it
        // installs the changes recovered from the log into the damaged tables): the report is
        // what was asked for, and the close's failure is said after it.
        try {
            s.close();
        } catch (RuntimeException e) {
            out.flush();
            spec.commandLine().getErr().println("htod verify: " + store + " verified, then its close failed: "
                    + Exit.message(e));
            return code == Exit.OK.code ? Exit.of(e).code : code;
        }
        return code;
    }

    /** Prints {@code r}; {@code st}, taken after it, counts the entries of a sound store. */
    private int print(VerifyReport r, StoreStats st, PrintWriter out) {
        if (r.ok()) {
            out.println(store + ": sound: " + r.maps() + " maps, " + entries(r, st) + ", " + r.blocksReached()
                    + " blocks reached of " + r.blocksAllocated() + " allocated");
            return Exit.OK.code;
        }
        for (VerifyReport.Problem p : r.problems()) {
            out.println(store + ": offset " + p.offset() + ": " + p.message());
        }
        return Exit.PROBLEMS.code;
    }

    /**
     * The entries of the maps. In log mode verify counts what the tables hold, not the changes
     * waiting in the write buffer: after a crash those the log held are replayed into the buffer,
     * and a store of 200 entries was reported as "0 entries". The maps' sizes count both; the
     * buffered changes were read from the log under its checksums, not checked by verify.
     */
    private static String entries(VerifyReport r, StoreStats st) {
        StoreStats.WriteLayerFigures w = st == null ? null : st.writeLayer();
        if (w == null || w.bufferedKeys() == 0) {
            return r.entries() + " entries";
        }
        return st.totalEntries() + " entries (" + r.entries() + " in the tables verify read, and changes to "
                + w.bufferedKeys() + " keys replayed from the log into the write buffer)";
    }
}
