package org.htod.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.htod.Durability;
import org.htod.Htod;
import org.htod.HtodStore;
import org.htod.StorageMethod;
import org.htod.StoreEntry;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "import", description = "Reads JSON lines (as export writes them) into a store; each entry keeps its"
        + " expiry and version. Every line is checked, its size against what the store takes too, before anything is"
        + " written. A missing store is created under a temporary name beside STORE and moved into place once"
        + " complete; --direct, --log-size, --storage-method and --grain make it as the export's source was.")
final class ImportCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the JSON-lines file")
    Path source;

    @Parameters(index = "1", description = "the store file (created if missing)")
    Path store;

    @Option(names = "--quiet", description = "no progress bar")
    boolean quiet;

    @Option(names = "--direct", description = "a new store in direct mode, with no log: values of up to 256 MiB;"
            + " by default log mode, where one entry must fit in one log record, about an eighth of --log-size")
    boolean direct;

    @Option(names = "--log-size", paramLabel = "BYTES", description = "a new store's log region, a multiple of 4096;"
            + " default 64 MiB")
    Long logSize;

    @Option(names = "--storage-method", paramLabel = "METHOD", description = "a new store's heap storage method:"
            + " ${COMPLETION-CANDIDATES}; default TS")
    StorageMethod storageMethod;

    @Option(names = "--grain", paramLabel = "BYTES", description = "a new store's allocation unit, a multiple of 64;"
            + " default 512")
    Integer grain;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (!Files.isRegularFile(source)) {
            throw new java.nio.file.NoSuchFileException(source + ": no such file");
        }
        boolean create = !Files.exists(store);
        if (create) {
            Publish.mustHaveDirectory(store);
        } else {
            Stores.mustExist(store);
            if (direct || logSize != null || storageMethod != null || grain != null) {
                throw new ParameterException(spec.commandLine(), "--direct, --log-size, --storage-method and --grain"
                        + " make a new store; " + store + " exists and keeps its own");
            }
        }
        // A new store is written aside: an import that fails, or is killed, leaves no half store
        // under the name (a killed one's file, NAME.partial-HEX, goes at the next open of NAME).
        // Its creation is inside the try too: formatting can fail once the file exists (the disk
        // full, a device error, a log too large for the file system).
        Path file = create ? Publish.temporary(store) : store;
        HtodStore s = null;
        long n;
        try {
            s = open(file, create);
            ImportLimits limits = ImportLimits.of(s, create);
            long lines = check(limits);
            n = load(s, lines);
            s.sync();
            s.close();
            if (create) {
                Publish.publish(file, store);
            }
        } catch (Exception | Error e) {
            if (s != null) {
                try {
                    s.close();
                } catch (RuntimeException again) {
                    e.addSuppressed(again);
                }
            }
            if (create) {
                try {
                    Files.deleteIfExists(file);
                } catch (IOException again) {
                    e.addSuppressed(again);
                }
            }
            throw e;
        }
        spec.commandLine().getOut().println(n + " entries imported into " + store);
        return Exit.OK.code;
    }

    private HtodStore open(Path file, boolean create) {
        Htod.Builder b = Htod.builder(file).durability(Durability.NONE);
        if (create) {
            try { // each setter checks its value at once
                b.directMode(direct);
                if (logSize != null) {
                    b.logSize(logSize);
                }
                if (storageMethod != null) {
                    b.storageMethod(storageMethod);
                }
                if (grain != null) {
                    b.grain(grain);
                }
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage(), e);
            }
        } else {
            b.createIfMissing(false).modeAsStored(true);
        }
        try (Bar recovering = Bar.of("recover", "", quiet)) {
            // A store that was not closed cleanly recovers first, which can take a while.
            return b.progress(recovering).open();
        }
    }

    private long load(HtodStore s, long lines) throws IOException {
        long n = 0;
        try (InputLines in = new InputLines(source); Bar bar = Bar.of("import", "entries", quiet)) {
            for (String line; (line = in.next()) != null;) {
                if (!line.isBlank()) {
                    s.load(entry(line, in.number()));
                    bar.step(++n, lines);
                }
            }
        }
        return n;
    }

    /**
     * Reads every line once, so that a bad one, or an entry larger than the store takes, stops the
     * import before it writes anything; returns the entries. Reads on past an entry too large, so
     * that the message can name a log size that holds the largest.
     */
    private long check(ImportLimits limits) throws IOException {
        long n = 0;
        String tooLarge = null;
        try (InputLines in = new InputLines(source)) {
            for (String line; (line = in.next()) != null;) {
                if (line.isBlank()) {
                    continue;
                }
                String why = limits.refusal(entry(line, in.number()));
                if (why != null && tooLarge == null) {
                    tooLarge = source + " line " + in.number() + ": " + why;
                }
                n++;
            }
        }
        if (tooLarge != null) {
            throw new Exit.BadInputException(tooLarge + limits.remedy(store), null);
        }
        return n;
    }

    private StoreEntry entry(String line, long no) {
        try {
            return EntryLines.read(Json.LINES.readTree(line), no);
        } catch (StreamConstraintsException e) {
            throw new Exit.BadInputException(source + " line " + no + ": a string longer than the base64 of the largest"
                    + " value a store takes (" + Json.MAX_STRING + " characters)", e);
        } catch (JsonProcessingException e) {
            throw new Exit.BadInputException(source + " line " + no + ": not JSON: " + e.getOriginalMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new Exit.BadInputException(source + " " + e.getMessage(), e);
        }
    }
}
