package org.htod.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.htod.HtodStore;
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
        VerifyReport r;
        Stores.mustExist(store);
        try (HtodStore s = Stores.open(store, quiet); Bar bar = Bar.of("verify", "blocks", quiet)) {
            r = s.verify(bar);
        } catch (CorruptStoreException e) {
            // Damage that stops the open is a finding of verify, not a failure of the tool.
            r = new VerifyReport(0, 0, 0, 0, List.of(new VerifyReport.Problem(e.offset(), e.getMessage())));
        }
        PrintWriter out = spec.commandLine().getOut();
        if (r.ok()) {
            out.println(store + ": sound: " + r.maps() + " maps, " + r.entries() + " entries, " + r.blocksReached()
                    + " blocks reached of " + r.blocksAllocated() + " allocated");
            return Exit.OK.code;
        }
        for (VerifyReport.Problem p : r.problems()) {
            out.println(store + ": offset " + p.offset() + ": " + p.message());
        }
        return Exit.PROBLEMS.code;
    }
}
