import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;

/**
 * One Apache Curator InterProcessMutex, driven line by line for the
 * ZooKeeper backend's interoperation test.
 *
 * <p>Usage: CuratorMutex CONNECT PATH. It prints "ready" once connected,
 * then reads commands from standard input: "acquire MS" answers
 * "acquired" or "timeout", "release" answers "released"; it exits at the
 * end of its input.
 */
public class CuratorMutex {
    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], new RetryOneTime(100));
        client.start();
        client.blockUntilConnected();
        InterProcessMutex mutex = new InterProcessMutex(client, args[1]);
        System.out.println("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split(" ");
            switch (f[0]) {
                case "acquire":
                    boolean got = mutex.acquire(Long.parseLong(f[1]), TimeUnit.MILLISECONDS);
                    System.out.println(got ? "acquired" : "timeout");
                    break;
                case "release":
                    mutex.release();
                    System.out.println("released");
                    break;
                default:
                    System.out.println("unknown command " + f[0]);
            }
            System.out.flush();
        }
        client.close();
    }
}
