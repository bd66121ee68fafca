package org.htod.cli;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
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
        // Results are flushed as they fill a buffer and at the end, not line by line: a dump
        // of millions of entries would otherwise make a system call per entry.
        System.exit(run(Output.of(new FileOutputStream(FileDescriptor.out), false),
                Output.of(new FileOutputStream(FileDescriptor.err), true), args));
    }

    /** Runs {@code args} with the given output and error streams; returns the exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cl = new CommandLine(new Main());
        cl.setOut(out);
        cl.setErr(err);
        boolean[] failed = {false};
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            failed[0] = true;
            Exit exit = Exit.of(e);
            line.getOut().flush(); // what the command printed before it failed comes first
            line.getErr().println("htod " + line.getCommandName() + ": " + Exit.message(e));
            return exit.code;
        });
        int code = cl.execute(args);
        try {
            Output.check(out, "standard output");
        } catch (IOException e) {
            // Results that did not reach their file or pipe (the disk full, the reader gone) are
            // not a success: a script would take a truncated dump or a lost report for a whole one.
            // A command that failed has said so already (a dump that found the failure itself).
            if (failed[0]) {
                err.flush();
                return code;
            }
            CommandLine.ParseResult parsed = cl.getParseResult();
            String name = parsed != null && parsed.hasSubcommand() ? " " + parsed.subcommand().commandSpec().name() : "";
            err.println("htod" + name + ": " + Exit.message(e));
            if (code == Exit.OK.code) {
                code = Exit.IO.code;
            }
        }
        err.flush();
        return code;
    }
}
