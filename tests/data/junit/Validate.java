// Validates an XML file against an XML Schema with the JDK's own validator (javax.xml.validation):
//   java Validate.java SCHEMA.xsd FILE.xml
// Exit 0 valid; 1 invalid (the first error, with its line and column, on stderr).
import java.io.File;
import javax.xml.XMLConstants;
import javax.xml.transform.stream.StreamSource;
import javax.xml.validation.SchemaFactory;
import org.xml.sax.SAXParseException;

public class Validate {
    public static void main(String[] args) throws Exception {
        var factory = SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI);
        var validator = factory.newSchema(new File(args[0])).newValidator();
        try {
            validator.validate(new StreamSource(new File(args[1])));
        } catch (SAXParseException e) {
            System.err.println(args[1] + ":" + e.getLineNumber() + ":" + e.getColumnNumber() + ": " + e.getMessage());
            System.exit(1);
        }
        System.out.println("valid");
    }
}
