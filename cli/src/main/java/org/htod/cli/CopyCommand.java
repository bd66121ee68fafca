package org.htod.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.htod.CopyReport;
import org.htod.Htod;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "copy", description = "Copies a closed store into a new file: its live entries rewritten into a store"
        + " of the same layout, verified, renamed into place. A store open in another process is locked (exit 4);"
        + " a program copies its own open store with HtodStore.copyTo, while it writes.")
final class CopyCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the store file")
    Path store;

    @Parameters(index = "1", description = "the new store file (must not exist)")
    Path target;

    @Option(names = "--quiet", description = "no progress bar")
    boolean quiet;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        Stores.mustExist(store);
        Stores.mustNotExist(target);
        Publish.mustHaveDirectory(target); // named as such, not as the library's temporary file
        CopyReport r;
        try (Bar bar = Bar.of("copy", "entries", quiet)) {
            r = Htod.copy(store, target, bar);
        }
        spec.commandLine().getOut().println(r);
        return Exit.OK.code;
    }
}
