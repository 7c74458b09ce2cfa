package kernel.neo4j;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.neo4j.cli.ExecutionContext;
import org.neo4j.commandline.admin.security.SetInitialPasswordCommand;
import org.neo4j.server.CommunityBootstrapper;
import picocli.CommandLine;

/**
 * Starts Neo4j Community as the kernel's graph store: Bolt and HTTP (with Neo4j Browser at
 * /browser/) on the loopback only, auth on, everything under one home directory.
 *
 * <p>Usage: {@code Launcher HOME BOLT_PORT HTTP_PORT}. Settings of your own go in
 * {@code HOME/extra.conf} (neo4j.conf syntax), appended to the ones below at each start.
 * HOME holds {@code password} (written
 * by neo4j/ctl.py, mode 0600); before the first start that password becomes the initial
 * password of user {@code neo4j}, so the server never answers with the default one. The
 * process runs until it is sent SIGTERM or SIGINT, which stop the database cleanly.
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: Launcher HOME BOLT_PORT HTTP_PORT");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        String bolt = "127.0.0.1:" + Integer.parseInt(args[1]);
        String http = "127.0.0.1:" + Integer.parseInt(args[2]);
        Path conf = home.resolve("conf");
        Files.createDirectories(conf);
        Path confFile = conf.resolve("neo4j.conf");
        Files.writeString(confFile, String.join("\n",
                "# Written by the launcher at each start; edit neo4j/Launcher.java instead.",
                "server.bolt.listen_address=" + bolt,
                "server.bolt.advertised_address=" + bolt,
                "server.http.listen_address=" + http,
                "server.http.advertised_address=" + http,
                "server.https.enabled=false",
                "dbms.security.auth_enabled=true",
                "server.memory.pagecache.size=256m",
                "db.tx_log.rotation.retention_policy=2 files",
                "dbms.usage_report.enabled=false",
                // Neo4j keys its plan cache by statement text, parameter types and, by
                // default, each string's and list's length rounded up to a power of ten:
                // the kernel's commits carry texts and lists of every length, so each of
                // its large statements was planned again for every combination of lengths
                // (seconds each). Its statements find nodes by key, where sizes change no plan.
                "internal.cypher.use_parameter_size=false",
                ""), StandardCharsets.UTF_8);
        Path extra = home.resolve("extra.conf");  // settings of your own, appended as they are
        if (Files.exists(extra)) {
            Files.writeString(confFile, Files.readString(extra, StandardCharsets.UTF_8),
                    StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
        }

        if (!Files.exists(home.resolve("data").resolve("databases").resolve("system"))) {
            String password = Files.readString(home.resolve("password"), StandardCharsets.UTF_8).strip();
            int status = new CommandLine(new SetInitialPasswordCommand(new ExecutionContext(home, conf)))
                    .execute(password);
            if (status != 0) {
                System.err.println("could not set the initial password (exit " + status + ")");
                System.exit(1);
            }
        }

        Map<String, String> overrides = new TreeMap<>();
        CommunityBootstrapper server = new CommunityBootstrapper();
        int status = server.start(home, confFile, overrides, false, false);
        if (status != 0) {
            System.err.println("Neo4j did not start (status " + status + "); see " + home.resolve("logs"));
            System.exit(status);
        }
        // The bootstrapper's own shutdown hook stops the database on SIGTERM and SIGINT.
        System.out.println("Neo4j started: bolt://" + bolt + " http://" + http + "/browser/");
        System.out.flush();
        Thread.currentThread().join();
    }
}
