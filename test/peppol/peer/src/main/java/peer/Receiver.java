package peer;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.util.Locale;
import java.util.Map;

import javax.annotation.Nonnull;
import javax.annotation.Nullable;

import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.w3c.dom.Node;

import com.helger.commons.collection.impl.CommonsArrayList;
import com.helger.commons.collection.impl.ICommonsList;
import com.helger.commons.http.EHttpMethod;
import com.helger.commons.http.HttpHeaderMap;
import com.helger.commons.io.stream.StreamHelper;
import com.helger.json.JsonObject;
import com.helger.peppol.sbdh.PeppolSBDHData;
import com.helger.peppol.sbdh.read.PeppolSBDHDocumentReader;
import com.helger.peppol.utils.EPeppolCertificateCheckResult;
import com.helger.peppol.utils.PeppolCAChecker;
import com.helger.peppolid.factory.SimpleIdentifierFactory;
import com.helger.phase4.attachment.WSS4JAttachment;
import com.helger.phase4.crypto.IAS4CryptoFactory;
import com.helger.phase4.ebms3header.Ebms3Error;
import com.helger.phase4.ebms3header.Ebms3SignalMessage;
import com.helger.phase4.ebms3header.Ebms3UserMessage;
import com.helger.phase4.incoming.AS4RequestHandler;
import com.helger.phase4.incoming.IAS4IncomingMessageMetadata;
import com.helger.phase4.incoming.IAS4IncomingMessageState;
import com.helger.phase4.incoming.spi.AS4MessageProcessorResult;
import com.helger.phase4.incoming.spi.AS4SignalMessageProcessorResult;
import com.helger.phase4.incoming.spi.IAS4IncomingMessageProcessorSPI;
import com.helger.phase4.mgr.MetaAS4Manager;
import com.helger.phase4.model.error.EEbmsError;
import com.helger.phase4.model.pmode.IPMode;
import com.helger.phase4.servlet.AS4UnifiedResponse;
import com.helger.phase4.servlet.AS4XServletHandler;
import com.helger.phase4.servlet.IAS4ServletRequestHandlerCustomizer;
import com.helger.servlet.mock.MockServletContext;
import com.helger.web.scope.IRequestWebScopeWithoutResponse;
import com.helger.web.scope.mgr.WebScopeManager;
import com.helger.xservlet.AbstractXServlet;


/**
 * The receiving side: phase4-lib's AS4 servlet handler in an embedded Jetty, with a message processor
 * doing what phase4's Peppol servlet module does (which is not on Maven Central): it insists on a
 * signed and encrypted message, checks that the test CA really signed the sender's certificate, reads
 * the SBDH with the Peppol rules (COUNTRY_C1 mandatory) and stores what it received.
 */
final class Receiver
{
  private static final Logger LOGGER = LoggerFactory.getLogger (Receiver.class);

  private Receiver ()
  {}

  static void run (final Map <String, String> opts) throws Exception
  {
    final int port = Integer.parseInt (opts.getOrDefault ("port", "0"));
    final Main.Identity id = new Main.Identity (Main.required (opts, "keystore"), Main.required (opts, "password"));
    final X509Certificate ca = Main.readCertificate (Main.required (opts, "trust-ca"));
    final Path out = Path.of (Main.required (opts, "out"));
    Files.createDirectories (out);
    final IAS4CryptoFactory crypto = Main.cryptoFactory (id, ca);
    final Processor processor = new Processor (ca, out);

    final Server server = new Server (new InetSocketAddress ("127.0.0.1", port));
    final ServletContextHandler ctx = new ServletContextHandler ();
    ctx.setContextPath ("/");
    // phase4's servlet base class needs the global scope when it is constructed.
    WebScopeManager.onGlobalBegin (MockServletContext.create ());
    MetaAS4Manager.getInstance ();
    Runtime.getRuntime ().addShutdownHook (new Thread (WebScopeManager::onGlobalEnd));
    ctx.addServlet (new ServletHolder (new PeerServlet (crypto, processor)), "/as4");
    server.setHandler (ctx);
    server.setStopAtShutdown (true);
    server.start ();
    final int actual = ((ServerConnector) server.getConnectors ()[0]).getLocalPort ();
    System.out.println ("READY http://127.0.0.1:" + actual + "/as4");
    System.out.flush ();
    server.join ();
  }

  /** phase4's AS4 handler with this peer's keys, trust and message processor. */
  static final class PeerServlet extends AbstractXServlet
  {
    PeerServlet (final IAS4CryptoFactory crypto, final Processor processor)
    {
      settings ().setMultipartEnabled (false);
      final AS4XServletHandler handler = new AS4XServletHandler ();
      handler.setRequestHandlerCustomizer (new IAS4ServletRequestHandlerCustomizer ()
      {
        public void customizeBeforeHandling (@Nonnull final IRequestWebScopeWithoutResponse aRequestScope,
                                             @Nonnull final AS4UnifiedResponse aUnifiedResponse,
                                             @Nonnull final AS4RequestHandler aRequestHandler)
        {
          aRequestHandler.setCryptoFactory (crypto);
          aRequestHandler.setProcessorSupplier ( () -> new CommonsArrayList <> (processor));
        }

        public void customizeAfterHandling (@Nonnull final IRequestWebScopeWithoutResponse aRequestScope,
                                            @Nonnull final AS4UnifiedResponse aUnifiedResponse,
                                            @Nonnull final AS4RequestHandler aRequestHandler)
        {}
      });
      handlerRegistry ().registerHandler (EHttpMethod.POST, handler);
    }
  }

  static final class Processor implements IAS4IncomingMessageProcessorSPI
  {
    private final X509Certificate m_aCA;
    private final PeppolCAChecker m_aCAChecker;
    private final Path m_aOut;

    Processor (final X509Certificate ca, final Path out)
    {
      m_aCA = ca;
      m_aCAChecker = new PeppolCAChecker (ca);
      m_aOut = out;
    }

    private static AS4MessageProcessorResult refuse (final ICommonsList <Ebms3Error> errors,
                                                     final EEbmsError code,
                                                     final Locale locale,
                                                     final String messageId,
                                                     final String detail)
    {
      LOGGER.warn ("[" + messageId + "] refused: " + detail);
      System.err.println ("REFUSED " + messageId + " " + code.getErrorCode () + " " + detail);
      errors.add (code.errorBuilder (locale).refToMessageInError (messageId).errorDetail (detail).build ());
      return AS4MessageProcessorResult.createFailure ();
    }

    public AS4MessageProcessorResult processAS4UserMessage (@Nonnull final IAS4IncomingMessageMetadata aMetadata,
                                                            @Nonnull final HttpHeaderMap aHttpHeaders,
                                                            @Nonnull final Ebms3UserMessage aUserMessage,
                                                            @Nonnull final IPMode aPMode,
                                                            @Nullable final Node aPayload,
                                                            @Nullable final ICommonsList <WSS4JAttachment> aAttachments,
                                                            @Nonnull final IAS4IncomingMessageState aState,
                                                            @Nonnull final ICommonsList <Ebms3Error> aErrors)
    {
      final String messageId = aUserMessage.getMessageInfo ().getMessageId ();
      final Locale locale = aState.getLocale ();
      if (!aState.isSoapSignatureChecked ())
        return refuse (aErrors, EEbmsError.EBMS_FAILED_AUTHENTICATION, locale, messageId, "The message is not signed");
      if (!aState.isSoapDecrypted ())
        return refuse (aErrors, EEbmsError.EBMS_FAILED_DECRYPTION, locale, messageId, "The message is not encrypted");
      final X509Certificate signer = aState.getUsedCertificate ();
      final String notIssued = Main.checkIssuedBy (signer, m_aCA);
      if (notIssued != null)
        return refuse (aErrors, EEbmsError.EBMS_FAILED_AUTHENTICATION, locale, messageId, notIssued);
      final EPeppolCertificateCheckResult check = m_aCAChecker.checkCertificate (signer);
      if (check.isInvalid ())
        return refuse (aErrors, EEbmsError.EBMS_FAILED_AUTHENTICATION, locale, messageId, "Signer certificate: " + check.getReason ());
      if (aAttachments == null || aAttachments.size () != 1)
        return refuse (aErrors,
                       EEbmsError.EBMS_OTHER,
                       locale,
                       messageId,
                       "Exactly one payload attachment is expected, got " + (aAttachments == null ? 0 : aAttachments.size ()));

      final byte [] sbd;
      try (InputStream in = aAttachments.getFirstOrNull ().getSourceStream ())
      {
        sbd = StreamHelper.getAllBytes (in);
      }
      catch (final Exception ex)
      {
        return refuse (aErrors, EEbmsError.EBMS_DECOMPRESSION_FAILURE, locale, messageId, "Cannot read the payload: " + ex.getMessage ());
      }
      if (sbd == null)
        return refuse (aErrors, EEbmsError.EBMS_DECOMPRESSION_FAILURE, locale, messageId, "Cannot read the payload");

      final PeppolSBDHData data;
      try
      {
        data = new PeppolSBDHDocumentReader (SimpleIdentifierFactory.INSTANCE).setPerformValueChecks (true)
                                                                               .setCheckForCountryC1 (true)
                                                                               .extractData (new ByteArrayInputStream (sbd));
      }
      catch (final Exception ex)
      {
        return refuse (aErrors, EEbmsError.EBMS_OTHER, locale, messageId, "Invalid Peppol SBDH: " + ex.getMessage ());
      }
      final byte [] ubl = businessMessageBytes (sbd);
      if (ubl == null)
        return refuse (aErrors, EEbmsError.EBMS_OTHER, locale, messageId, "No business message after the SBDH");

      final JsonObject meta = new JsonObject ();
      meta.add ("messageId", messageId);
      meta.add ("senderId", data.getSenderValue ());
      meta.add ("senderScheme", data.getSenderScheme ());
      meta.add ("receiverId", data.getReceiverValue ());
      meta.add ("receiverScheme", data.getReceiverScheme ());
      meta.add ("documentTypeId", data.getDocumentTypeValue ());
      meta.add ("documentTypeScheme", data.getDocumentTypeScheme ());
      meta.add ("processId", data.getProcessValue ());
      meta.add ("processScheme", data.getProcessScheme ());
      meta.add ("countryC1", data.getCountryC1 ());
      meta.add ("instanceIdentifier", data.getInstanceIdentifier ());
      final String conversationId = aUserMessage.getCollaborationInfo ().getConversationId ();
      if (conversationId != null)
        meta.add ("conversationId", conversationId);
      meta.add ("signerSubject", signer.getSubjectX500Principal ().getName ());
      try
      {
        // Written under a temporary name and moved into place, so that a reader never sees half a message.
        final String dirName = messageId.replaceAll ("[^A-Za-z0-9._@-]", "_");
        final Path tmp = Files.createTempDirectory (m_aOut, ".incoming-");
        Files.write (tmp.resolve ("sbdh.xml"), sbd);
        Files.write (tmp.resolve ("payload.xml"), ubl);
        Files.write (tmp.resolve ("meta.json"), meta.getAsJsonString ().getBytes (StandardCharsets.UTF_8));
        Files.move (tmp, m_aOut.resolve (dirName), StandardCopyOption.ATOMIC_MOVE);
      }
      catch (final Exception ex)
      {
        return refuse (aErrors, EEbmsError.EBMS_OTHER, locale, messageId, "Cannot store the message: " + ex.getMessage ());
      }
      System.err.println ("RECEIVED " + messageId);
      return AS4MessageProcessorResult.createSuccess ();
    }

    public AS4SignalMessageProcessorResult processAS4SignalMessage (@Nonnull final IAS4IncomingMessageMetadata aMetadata,
                                                                    @Nonnull final HttpHeaderMap aHttpHeaders,
                                                                    @Nonnull final Ebms3SignalMessage aSignalMessage,
                                                                    @Nullable final IPMode aPMode,
                                                                    @Nonnull final IAS4IncomingMessageState aState,
                                                                    @Nonnull final ICommonsList <Ebms3Error> aErrors)
    {
      return AS4SignalMessageProcessorResult.createSuccess ();
    }

    public void processAS4ResponseMessage (@Nonnull final IAS4IncomingMessageMetadata aMetadata,
                                           @Nonnull final IAS4IncomingMessageState aState,
                                           @Nonnull final String sResponseMessageID,
                                           @Nullable final byte [] aResponseBytes,
                                           final boolean bResponsePayloadIsAvailable)
    {}
  }

  /**
   * The exact bytes of the business message (the UBL document) inside the StandardBusinessDocument: from
   * the first element after the header's end tag to just before the document's own end tag.
   */
  static byte [] businessMessageBytes (final byte [] sbd)
  {
    final String text = new String (sbd, StandardCharsets.UTF_8);
    final java.util.regex.Matcher headerEnd = java.util.regex.Pattern.compile ("</([A-Za-z_][\\w.-]*:)?StandardBusinessDocumentHeader\\s*>")
                                                                    .matcher (text);
    if (!headerEnd.find ())
      return null;
    int start = headerEnd.end ();
    // Skip whitespace and comments up to the business message's start tag.
    while (start < text.length ())
    {
      if (Character.isWhitespace (text.charAt (start)))
        start++;
      else
        if (text.startsWith ("<!--", start))
        {
          final int end = text.indexOf ("-->", start);
          if (end < 0)
            return null;
          start = end + 3;
        }
        else
          break;
    }
    final java.util.regex.Matcher docEnd = java.util.regex.Pattern.compile ("</([A-Za-z_][\\w.-]*:)?StandardBusinessDocument\\s*>\\s*$")
                                                                 .matcher (text);
    if (!docEnd.find (start))
      return null;
    int end = docEnd.start ();
    while (end > start && Character.isWhitespace (text.charAt (end - 1)))
      end--;
    if (end <= start || text.charAt (start) != '<')
      return null;
    return text.substring (start, end).getBytes (StandardCharsets.UTF_8);
  }
}
