package org.htod.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.htod.CopyReport;
import org.htod.Htod;
import org.htod.core.StoreLockedException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "salvage", description = "Writes every readable entry of a damaged store into a new store, leaving the"
        + " damaged one untouched: a walk of its maps when it opens and verifies, else a scan of its heap block by block."
        + " A store open in this process or another is locked (exit 4).")
final class SalvageCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the damaged store file")
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
        Publish.mustHaveDirectory(target);
        // Htod.salvage reads the damaged file under a shared lock, which a writer's open refuses,
        // and never writes it: a store another process has open is refused, not copied torn.
        CopyReport r;
        try (Bar bar = Bar.of("salvage", "", quiet)) {
            r = Htod.salvage(store, target, bar);
        } catch (StoreLockedException e) {
            throw new StoreLockedException(store + " is locked: a store has it open, in this process or another;"
                    + " salvage reads only a store nobody writes, so close that store first");
        }
        spec.commandLine().getOut().println(r);
        return Exit.OK.code;
    }

}
