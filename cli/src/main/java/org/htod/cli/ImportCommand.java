package org.htod.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "import", description = "Reads JSON lines (as export writes them) into a store, created if missing;"
        + " each entry keeps its expiry and version. Every line is checked before anything is written.")
final class ImportCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the JSON-lines file")
    Path source;

    @Parameters(index = "1", description = "the store file (created if missing)")
    Path store;

    @Option(names = "--quiet", description = "no progress bar")
    boolean quiet;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (!Files.isRegularFile(source)) {
            throw new java.nio.file.NoSuchFileException(source + ": no such file");
        }
        long lines = check();
        long n = 0;
        HtodStore opened;
        try (Bar recovering = Bar.of("recover", "", quiet)) {
            // A store that was not closed cleanly recovers first, which can take a while.
            opened = Htod.builder(store).modeAsStored(true).durability(Durability.NONE).progress(recovering).open();
        }
        try (HtodStore s = opened;
                BufferedReader r = Files.newBufferedReader(source, StandardCharsets.UTF_8);
                Bar bar = Bar.of("import", "entries", quiet)) {
            String line;
            long no = 0;
            while ((line = r.readLine()) != null) {
                no++;
                if (line.isBlank()) {
                    continue;
                }
                s.load(EntryLines.read(Json.MAPPER.readTree(line), no));
                bar.step(++n, lines);
            }
            s.sync();
        }
        spec.commandLine().getOut().println(n + " entries imported into " + store);
        return Exit.OK.code;
    }

    /** Reads every line once, so that a bad one stops the import before it writes anything. */
    private long check() throws Exception {
        long n = 0;
        try (BufferedReader r = Files.newBufferedReader(source, StandardCharsets.UTF_8)) {
            String line;
            long no = 0;
            while ((line = r.readLine()) != null) {
                no++;
                if (line.isBlank()) {
                    continue;
                }
                try {
                    EntryLines.read(Json.MAPPER.readTree(line), no);
                } catch (JsonProcessingException e) {
                    throw new IllegalArgumentException(source + " line " + no + ": not JSON: "
                            + e.getOriginalMessage(), e);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(source + " " + e.getMessage(), e);
                }
                n++;
            }
        }
        return n;
    }
}
