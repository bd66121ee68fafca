package org.htod.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.htod.CopyReport;
import org.htod.Htod;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "compact", description = "Offline: rewrites the live entries of a closed store into a new store"
        + " (batch allocation, same layout), verifies it, and renames it over the old one; prints the sizes before and"
        + " after.")
final class CompactCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the store file (not open anywhere)")
    Path store;

    @Option(names = "--quiet", description = "no progress bar")
    boolean quiet;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        Stores.mustExist(store);
        CopyReport r;
        try (Bar bar = Bar.of("compact", "entries", quiet)) {
            r = Htod.compact(store, bar);
        }
        spec.commandLine().getOut().println(store + ": " + r.entries() + " entries in " + r.maps() + " maps; "
                + r.sourceBytes() + " bytes before, " + r.targetBytes() + " after");
        return Exit.OK.code;
    }
}
