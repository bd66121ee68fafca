package org.htod.cli;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;
import org.htod.HtodStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "export", description = "Every entry of every map, with its expiry and version, as JSON lines into a"
        + " new file (written aside, synced, and linked into place: never over a file that exists); import reads it"
        + " back.")
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
        // Before the store is opened and walked, and as an I/O failure naming the directory: the
        // temporary file's NoSuchFileException would say "no store there" with a bare path.
        Publish.mustHaveDirectory(target);
        Path tmp = Publish.temporary(target);
        long n;
        try (HtodStore s = Stores.open(store)) {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                Output out = Output.of(new BufferedOutputStream(Channels.newOutputStream(ch), 1 << 16), false);
                n = DumpCommand.write(s, null, false, out, tmp.toString());
                // On the disk before it has the target's name: after a power loss the target is
                // then whole or absent, never a name over a file the cache had not written yet.
                ch.force(true);
            }
            Publish.publish(tmp, target);
        } finally {
            Files.deleteIfExists(tmp);
        }
        spec.commandLine().getOut().println(n + " entries exported to " + target);
        return Exit.OK.code;
    }
}
