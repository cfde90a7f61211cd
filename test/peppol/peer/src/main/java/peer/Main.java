package peer;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

import com.helger.commons.debug.GlobalDebug;
import com.helger.peppol.utils.CertificateRevocationCheckerDefaults;
import com.helger.peppol.utils.ERevocationCheckMode;
import com.helger.phase4.crypto.AS4CryptoFactoryInMemoryKeyStore;
import com.helger.phase4.incoming.mgr.AS4ProfileSelector;
import com.helger.phase4.profile.peppol.AS4PeppolProfileRegistarSPI;

/**
 * The independent Peppol AS4 test peer (phase4 3.0.0). Two modes:
 *
 * <pre>
 * receive --port P --keystore p12 --password X --trust-ca ca.pem --out DIR
 * send --to URL --keystore p12 --password X --trust-ca ca.pem --receiver-cert cert.pem --payload file.xml
 *      --sender-id 0088:... --receiver-id 0088:... --doctype ... --process ... --country-c1 AE
 *      [--message-id ID] [--tamper signature] [--dump-request FILE]
 * send-many (the options of send) --count N --concurrency C
 * check-cert --trust-ca ca.pem --cert cert.pem
 * </pre>
 *
 * Only for tests: phase4 runs in debug mode, which is what allows plain http:// endpoints.
 */
public final class Main
{
  private Main ()
  {}

  static Map <String, String> parseArgs (final String [] args, final int from)
  {
    final Map <String, String> ret = new HashMap <> ();
    for (int i = from; i < args.length; i++)
    {
      final String a = args[i];
      if (!a.startsWith ("--") || i + 1 >= args.length)
        throw new IllegalArgumentException ("Expected '--name value' pairs, got '" + a + "'");
      ret.put (a.substring (2), args[++i]);
    }
    return ret;
  }

  static String required (final Map <String, String> opts, final String name)
  {
    final String v = opts.get (name);
    if (v == null || v.isEmpty ())
      throw new IllegalArgumentException ("Missing --" + name);
    return v;
  }

  static X509Certificate readCertificate (final String path) throws Exception
  {
    final byte [] bytes = Files.readAllBytes (Path.of (path));
    return (X509Certificate) CertificateFactory.getInstance ("X.509").generateCertificate (new ByteArrayInputStream (bytes));
  }

  /** The key store with exactly one private key entry; its alias is returned via the holder. */
  static final class Identity
  {
    final KeyStore keyStore;
    final String alias;
    final char [] password;
    final X509Certificate certificate;

    Identity (final String p12Path, final String password) throws Exception
    {
      this.password = password.toCharArray ();
      keyStore = KeyStore.getInstance ("PKCS12");
      try (var in = Files.newInputStream (Path.of (p12Path)))
      {
        keyStore.load (in, this.password);
      }
      String found = null;
      for (final String a : Collections.list (keyStore.aliases ()))
        if (keyStore.isKeyEntry (a))
        {
          found = a;
          break;
        }
      if (found == null)
        throw new IllegalArgumentException ("No private key in " + p12Path);
      alias = found;
      certificate = (X509Certificate) keyStore.getCertificate (alias);
    }
  }

  /**
   * The crypto factory: own key for signing and decrypting; a trust store holding only the test CA,
   * which WSS4J uses to validate the signer's certificate path (a real signature check).
   */
  static AS4CryptoFactoryInMemoryKeyStore cryptoFactory (final Identity id, final X509Certificate ca) throws Exception
  {
    final KeyStore trust = KeyStore.getInstance ("PKCS12");
    trust.load (null, null);
    trust.setCertificateEntry ("test-ca", ca);
    return new AS4CryptoFactoryInMemoryKeyStore (id.keyStore, id.alias, id.password, trust);
  }

  /**
   * The certificate really carries the CA's signature and is within its validity (a check on the issuer
   * name alone would accept a certificate of another CA that copies the name).
   */
  static String checkIssuedBy (final X509Certificate cert, final X509Certificate ca)
  {
    if (cert == null)
      return "no certificate";
    try
    {
      cert.verify (ca.getPublicKey ());
    }
    catch (final Exception ex)
    {
      return "certificate " + cert.getSubjectX500Principal ().getName () + " is not signed by the trusted CA (" + ex.getMessage () + ")";
    }
    try
    {
      cert.checkValidity ();
    }
    catch (final Exception ex)
    {
      return "certificate " + cert.getSubjectX500Principal ().getName () + " is not valid now (" + ex.getMessage () + ")";
    }
    return null;
  }

  static void initPhase4 (final Path dataDir)
  {
    System.setProperty ("global.debug", "true");
    System.setProperty ("global.production", "false");
    System.setProperty ("global.datapath", dataDir.resolve ("data").toString ());
    System.setProperty ("phase4.manager.inmemory", "true");
    System.setProperty ("phase4.dump.path", dataDir.resolve ("dumps").toString ());
    System.setProperty ("phase4.errormsg.include.stacktraces", "false");
    // Plain http:// endpoints are allowed in debug mode only.
    GlobalDebug.setDebugModeDirect (true);
    GlobalDebug.setProductionModeDirect (false);
    // Debug mode also switches on the tracing of JAXP, activation, mail and security: not wanted on stderr.
    for (final String p : new String [] { "jaxp.debug",
                                          "javax.activation.debug",
                                          "mail.debug",
                                          "sun.io.serialization.extendedDebugInfo",
                                          "javax.net.debug",
                                          "java.security.debug" })
      System.clearProperty (p);
    // The test PKI publishes neither OCSP nor CRL.
    CertificateRevocationCheckerDefaults.setRevocationCheckMode (ERevocationCheckMode.NONE);
    AS4ProfileSelector.setCustomDefaultAS4ProfileID (AS4PeppolProfileRegistarSPI.AS4_PROFILE_ID);
  }

  public static void main (final String [] args) throws Exception
  {
    if (args.length < 1)
    {
      System.err.println ("usage: receive|send|send-many|check-cert --name value ...");
      System.exit (2);
    }
    final Map <String, String> opts;
    try
    {
      opts = parseArgs (args, 1);
    }
    catch (final IllegalArgumentException ex)
    {
      System.err.println (ex.getMessage ());
      System.exit (2);
      return;
    }
    final Path dataDir = Files.createTempDirectory ("phase4-peer-");
    initPhase4 (dataDir);
    switch (args[0])
    {
      case "receive":
        Receiver.run (opts);
        break;
      case "send":
        final int rc = Sender.run (opts);
        System.out.flush ();
        System.exit (rc);
        break;
      case "send-many":
        final int rcMany = Sender.runMany (opts);
        System.out.flush ();
        System.exit (rcMany);
        break;
      case "check-cert":
        checkCert (opts);
        break;
      default:
        System.err.println ("unknown mode " + args[0]);
        System.exit (2);
    }
  }

  /**
   * Prints what phase4's Peppol CA check and a real signature check say of one certificate:
   * {"peppolCAChecker": "valid"|"expired"|..., "signedByCA": true|false, "validNow": true|false}.
   */
  static void checkCert (final Map <String, String> opts) throws Exception
  {
    final X509Certificate ca = readCertificate (required (opts, "trust-ca"));
    final X509Certificate cert = readCertificate (required (opts, "cert"));
    final var phase4 = new com.helger.peppol.utils.PeppolCAChecker (ca).checkCertificate (cert);
    boolean signed = true;
    try
    {
      cert.verify (ca.getPublicKey ());
    }
    catch (final Exception ex)
    {
      signed = false;
    }
    boolean valid = true;
    try
    {
      cert.checkValidity ();
    }
    catch (final Exception ex)
    {
      valid = false;
    }
    final com.helger.json.JsonObject out = new com.helger.json.JsonObject ();
    out.add ("peppolCAChecker", phase4.getID ());
    out.add ("signedByCA", signed);
    out.add ("validNow", valid);
    System.out.println (out.getAsJsonString ());
  }

  static byte [] utf8 (final String s)
  {
    return s.getBytes (StandardCharsets.UTF_8);
  }
}
