package org.htod.cli;

import java.io.BufferedWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.Callable;
import org.htod.HtodStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "export", description = "Every entry of every map, with its expiry and version, as JSON lines into a"
        + " new file (written aside and renamed into place); import reads it back.")
final class ExportCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the store file")
    Path store;

    @Parameters(index = "1", description = "the JSON-lines file to write (must not exist)")
    Path target;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Stores.mustNotExist(target);
        Path tmp = target.toAbsolutePath().resolveSibling(target.getFileName() + ".partial");
        long n;
        try (HtodStore s = Stores.open(store)) {
            try (BufferedWriter w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8);
                    PrintWriter out = new PrintWriter(w)) {
                n = DumpCommand.write(s, null, false, out);
                if (out.checkError()) {
                    throw new java.io.IOException("cannot write " + tmp);
                }
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
        spec.commandLine().getOut().println(n + " entries exported to " + target);
        return Exit.OK.code;
    }
}
