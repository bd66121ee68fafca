package org.htod.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Callable;
import org.htod.HtodStore;
import org.htod.StoreEntry;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "dump", description = "Every entry as a JSON line on stdout (key and value as text where they are"
        + " UTF-8, base64 under key64/value64 where not).")
final class DumpCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the store file")
    Path store;

    @Option(names = "--map", description = "only this map (repeatable); all maps by default")
    List<String> maps;

    @Option(names = "--keys-only", description = "map and key only")
    boolean keysOnly;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        try (HtodStore s = Stores.open(store)) {
            write(s, maps, keysOnly, spec.commandLine().getOut(), "standard output");
        }
        return Exit.OK.code;
    }

    /**
     * Writes the entries to {@code out} (named {@code what} in errors); returns how many. A failed
     * write throws: a {@code PrintWriter} only sets a flag, and a dump into a full disk or a
     * closed pipe would end as if whole. Looked at every few thousand lines, so that a failure
     * stops the walk early, and at the end.
     */
    static long write(HtodStore s, List<String> maps, boolean keysOnly, PrintWriter out, String what)
            throws IOException {
        long n = 0;
        for (String map : maps == null ? s.mapNames().stream().sorted().toList() : maps) {
            for (Iterator<StoreEntry> it = s.entries(map); it.hasNext();) {
                out.println(EntryLines.write(it.next(), keysOnly).toString());
                if ((++n & 4095) == 0) {
                    Output.check(out, what);
                }
            }
        }
        Output.check(out, what);
        return n;
    }
}
