package org.htod.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code htod}: inspect, check, copy, compact, export, import and salvage htod stores from a
 * shell. Each command names a store file; errors are one line on stderr naming the file and the
 * cause, with an exit code per kind of failure ({@link Exit}).
 */
@Command(name = "htod", mixinStandardHelpOptions = true, version = "htod 0.1.0",
        description = "Inspect and maintain htod stores.",
        subcommands = {InfoCommand.class, StatsCommand.class, VerifyCommand.class, DumpCommand.class,
            ExportCommand.class, ImportCommand.class, CompactCommand.class, CopyCommand.class, SalvageCommand.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:done; verify found the store sound",
            "1:verify found problems (each printed with its offset)",
            "2:bad usage",
            "3:no store there (missing file, or not an htod store)",
            "4:the store is locked (open in another process)",
            "5:the store's format version is too new or too old for this tool",
            "6:the store is corrupt (it cannot be opened)",
            "7:the disk is full",
            "8:an I/O error",
            "9:the target exists",
            "10:another error (bad input line, unsupported operation)"})
public final class Main {

    public static void main(String[] args) {
        System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs {@code args} with the given output and error streams; returns the exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cl = new CommandLine(new Main());
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            Exit exit = Exit.of(e);
            line.getErr().println("htod " + line.getCommandName() + ": " + Exit.message(e));
            return exit.code;
        });
        int code = cl.execute(args);
        out.flush();
        err.flush();
        return code;
    }
}
