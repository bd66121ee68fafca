import java.nio.ByteBuffer;
import java.util.*;
import java.util.concurrent.*;
import org.htod.*;
import org.htod.core.device.*;

public class Stripes {
    static final class SlowSync extends ForwardingDevice {
        SlowSync(BlockDevice d) { super(d); }
        @Override public void sync() { try { Thread.sleep(1); } catch (InterruptedException e) { Thread.currentThread().interrupt(); } super.sync(); }
    }
    public static void main(String[] a) throws Exception {
        int threads = Integer.parseInt(a[0]), per = Integer.parseInt(a[1]);
        for (int round = 0; round < 3; round++) {
            HtodStore s = Htod.builder(new SlowSync(new MemoryDevice())).grain(64).durability(Durability.SYNC).open();
            HtodMap<String, String> m = s.map("m", Codec.string(), Codec.string());
            var before = s.stats().writeLayer();
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                Thread th = new Thread(() -> { SplittableRandom r = new SplittableRandom(me * 7919L + 1);
                    for (int i = 0; i < per; i++) m.set("key-" + r.nextInt(100000), "v".repeat(200)); });
                ts.add(th); th.start();
            }
            for (Thread th : ts) th.join();
            var after = s.stats().writeLayer();
            long g = after.groupCommits() - before.groupCommits(), rec = after.recordsCommitted() - before.recordsCommitted();
            System.out.printf("%d writers x %d puts: %d group commits, %.1f records a group%n", threads, per, g, rec / (double) g);
            s.close();
        }
    }
}
