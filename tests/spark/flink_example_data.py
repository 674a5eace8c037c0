"""Apache Flink's example data, as Flink's example tests hold it (apache/flink): the inputs of
Flink's streaming examples and the outputs Flink's ITCases expect of them. Data only: the
programs are ported in ``test_flink_streaming_examples.py``."""

#: ``TopSpeedWindowingExampleData.CAR_DATA`` (flink-examples-streaming, windowing/util): one
#: ``(carId, speed, distance, timestamp)`` a line
CAR_DATA = """\
(0,55,15.277777777777777,1424951918630)
(1,45,12.5,1424951918632)
(0,50,29.166666666666664,1424951919632)
(1,50,26.38888888888889,1424951919632)
(0,55,44.44444444444444,1424951920633)
(1,45,38.888888888888886,1424951920633)
(0,50,58.33333333333333,1424951921634)
(1,40,50.0,1424951921634)
(0,55,73.6111111111111,1424951922634)
(1,35,59.72222222222222,1424951922634)
(0,60,90.27777777777777,1424951923634)
(1,40,70.83333333333333,1424951923634)
(0,65,108.33333333333333,1424951924635)
(1,35,80.55555555555554,1424951924635)
(0,60,125.0,1424951925635)
(1,40,91.66666666666666,1424951925635)
(0,55,140.27777777777777,1424951926635)
(1,45,104.16666666666666,1424951926636)
(0,60,156.94444444444443,1424951927636)
(1,50,118.05555555555554,1424951927636)
(0,55,172.2222222222222,1424951928636)
(1,45,130.55555555555554,1424951928636)
(0,50,186.1111111111111,1424951929636)
(1,50,144.44444444444443,1424951929637)
(0,55,201.38888888888886,1424951930637)
(1,55,159.7222222222222,1424951930637)
(0,60,218.05555555555551,1424951931637)
(1,60,176.38888888888886,1424951931637)
(0,55,233.3333333333333,1424951932637)
(1,65,194.4444444444444,1424951932638)
(0,50,247.22222222222217,1424951933638)
(1,70,213.88888888888886,1424951933638)
(0,45,259.7222222222222,1424951934638)
(1,65,231.9444444444444,1424951934638)
(0,50,273.6111111111111,1424951935638)
(1,70,251.38888888888886,1424951935639)
(0,55,288.88888888888886,1424951936639)
(1,75,272.2222222222222,1424951936639)
(0,50,302.77777777777777,1424951937639)
(1,70,291.66666666666663,1424951937639)
(0,45,315.27777777777777,1424951938640)
(1,65,309.7222222222222,1424951938640)
(0,50,329.1666666666667,1424951939640)
(1,70,329.16666666666663,1424951939640)
(0,55,344.44444444444446,1424951940640)
(1,65,347.2222222222222,1424951940640)
(0,50,358.33333333333337,1424951941641)
(1,70,366.66666666666663,1424951941641)
(0,55,373.61111111111114,1424951942641)
(1,65,384.7222222222222,1424951942641)
(0,50,387.50000000000006,1424951943641)
(1,70,404.16666666666663,1424951943641)
(0,45,400.00000000000006,1424951944642)
(1,65,422.2222222222222,1424951944642)
(0,50,413.88888888888897,1424951945642)
(1,60,438.88888888888886,1424951945642)
(0,45,426.38888888888897,1424951946642)
(1,65,456.9444444444444,1424951946642)
(0,40,437.50000000000006,1424951947643)
(1,70,476.38888888888886,1424951947643)
(0,45,450.00000000000006,1424951948643)
(1,75,497.2222222222222,1424951948643)
(0,40,461.11111111111114,1424951949643)
(1,80,519.4444444444443,1424951949644)
(0,45,473.61111111111114,1424951950644)
(1,75,540.2777777777777,1424951950644)
(0,50,487.50000000000006,1424951951644)
(1,80,562.4999999999999,1424951951644)
(0,45,500.00000000000006,1424951952644)
(1,85,586.111111111111,1424951952645)
(0,40,511.11111111111114,1424951953645)
(1,80,608.3333333333331,1424951953645)
(0,35,520.8333333333334,1424951954645)
(1,75,629.1666666666665,1424951954645)
(0,40,531.9444444444445,1424951955645)
(1,70,648.611111111111,1424951955646)
(0,45,544.4444444444445,1424951956646)
(1,75,669.4444444444443,1424951956646)
(0,50,558.3333333333334,1424951957646)
(1,80,691.6666666666665,1424951957646)
(0,55,573.6111111111112,1424951958646)
(1,85,715.2777777777776,1424951958647)
(0,60,590.2777777777778,1424951959647)
(1,80,737.4999999999998,1424951959647)
(0,65,608.3333333333334,1424951960647)
(1,85,761.1111111111109,1424951960647)
(0,70,627.7777777777778,1424951961647)
(1,80,783.333333333333,1424951961648)
(0,75,648.6111111111112,1424951962648)
(1,85,806.9444444444441,1424951962648)
(0,80,670.8333333333334,1424951963648)
(1,90,831.9444444444441,1424951963648)
(0,75,691.6666666666667,1424951964649)
(1,95,858.333333333333,1424951964649)
(0,70,711.1111111111112,1424951965649)
(1,90,883.333333333333,1424951965649)
(0,75,731.9444444444446,1424951966649)
(1,95,909.722222222222,1424951966649)
(0,70,751.388888888889,1424951967649)
(1,100,937.4999999999998,1424951967650)
(0,75,772.2222222222224,1424951968650)
(1,100,965.2777777777776,1424951968650)
(0,80,794.4444444444446,1424951969650)
(1,100,993.0555555555554,1424951969650)
(0,75,815.2777777777779,1424951970651)
(1,100,1020.8333333333333,1424951970651)
(0,80,837.5000000000001,1424951971651)
(1,100,1048.611111111111,1424951971651)
(0,85,861.1111111111112,1424951972651)
(1,100,1076.388888888889,1424951972651)
(0,80,883.3333333333334,1424951973652)
(1,95,1102.7777777777778,1424951973652)
(0,75,904.1666666666667,1424951974652)
(1,100,1130.5555555555557,1424951974652)
(0,70,923.6111111111112,1424951975652)
(1,100,1158.3333333333335,1424951975652)
(0,75,944.4444444444446,1424951976653)
(1,100,1186.1111111111113,1424951976653)
(0,80,966.6666666666667,1424951977653)
(1,95,1212.5000000000002,1424951977653)
(0,75,987.5000000000001,1424951978653)
(1,100,1240.277777777778,1424951978653)
(0,80,1009.7222222222223,1424951979654)
(1,100,1268.0555555555559,1424951979654)
(0,85,1033.3333333333335,1424951980654)
(1,100,1295.8333333333337,1424951980654)
(0,90,1058.3333333333335,1424951981654)
(1,100,1323.6111111111115,1424951981654)
(0,85,1081.9444444444446,1424951982655)
(1,100,1351.3888888888894,1424951982655)
(0,90,1106.9444444444446,1424951983655)
(1,100,1379.1666666666672,1424951983655)
(0,95,1133.3333333333335,1424951984655)
(1,100,1406.944444444445,1424951984656)
(0,90,1158.3333333333335,1424951985656)
(1,95,1433.333333333334,1424951985656)
(0,95,1184.7222222222224,1424951986656)
(1,90,1458.333333333334,1424951986656)
(0,90,1209.7222222222224,1424951987656)
(1,95,1484.7222222222229,1424951987657)
(0,85,1233.3333333333335,1424951988657)
(1,90,1509.7222222222229,1424951988657)
(0,80,1255.5555555555557,1424951989657)
(1,95,1536.1111111111118,1424951989657)
(0,85,1279.1666666666667,1424951990657)
(1,100,1563.8888888888896,1424951990658)
(0,90,1304.1666666666667,1424951991658)
(1,95,1590.2777777777785,1424951991658)
(0,95,1330.5555555555557,1424951992658)
(1,90,1615.2777777777785,1424951992658)
(0,100,1358.3333333333335,1424951993659)
(1,95,1641.6666666666674,1424951993659)
(0,100,1386.1111111111113,1424951994659)
(1,100,1669.4444444444453,1424951994659)
(0,95,1412.5000000000002,1424951995659)
(1,95,1695.8333333333342,1424951995660)
(0,100,1440.277777777778,1424951996660)
(1,90,1720.8333333333342,1424951996660)
(0,100,1468.0555555555559,1424951997660)
(1,85,1744.4444444444453,1424951997660)
(0,95,1494.4444444444448,1424951998660)
(1,80,1766.6666666666674,1424951998661)
(0,100,1522.2222222222226,1424951999661)
(1,75,1787.5000000000007,1424951999661)
(0,95,1548.6111111111115,1424952000661)
(1,80,1809.7222222222229,1424952000661)
(0,90,1573.6111111111115,1424952001662)
(1,75,1830.555555555556,1424952001662)
(0,95,1600.0000000000005,1424952002662)
(1,80,1852.7777777777783,1424952002662)
(0,100,1627.7777777777783,1424952003662)
(1,85,1876.3888888888894,1424952003662)
(0,100,1655.555555555556,1424952004663)
(1,80,1898.6111111111115,1424952004663)
(0,95,1681.944444444445,1424952005663)
(1,85,1922.2222222222226,1424952005663)
(0,100,1709.7222222222229,1424952006663)
(1,90,1947.2222222222226,1424952006664)
(0,100,1737.5000000000007,1424952007664)
(1,95,1973.6111111111115,1424952007664)
(0,95,1763.8888888888896,1424952008664)
(1,90,1998.6111111111115,1424952008664)
(0,100,1791.6666666666674,1424952009664)
(1,85,2022.2222222222226,1424952009665)
(0,95,1818.0555555555563,1424952010665)
(1,80,2044.4444444444448,1424952010665)
(0,90,1843.0555555555563,1424952011665)
(1,75,2065.2777777777783,1424952011665)
(0,95,1869.4444444444453,1424952012666)
(1,80,2087.5000000000005,1424952012666)
(0,100,1897.222222222223,1424952013666)
(1,85,2111.1111111111118,1424952013666)
(0,95,1923.611111111112,1424952014666)
(1,90,2136.1111111111118,1424952014666)
(0,100,1951.3888888888898,1424952015667)
(1,85,2159.722222222223,1424952015667)
(0,95,1977.7777777777787,1424952016667)
(1,90,2184.722222222223,1424952016667)
(0,100,2005.5555555555566,1424952017667)
(1,95,2211.1111111111118,1424952017668)
"""

#: ``TopSpeedWindowingExampleData.TOP_SPEEDS``: what ``TopSpeedWindowingExampleITCase`` expects
#: (71 lines, the version of the new window operator: no firing at the end of the input)
TOP_SPEEDS = """\
(0,55,15.277777777777777,1424951918630)
(1,50,26.38888888888889,1424951919632)
(0,65,108.33333333333333,1424951924635)
(1,50,26.38888888888889,1424951919632)
(0,65,108.33333333333333,1424951924635)
(1,65,194.4444444444444,1424951932638)
(0,65,108.33333333333333,1424951924635)
(1,70,213.88888888888886,1424951933638)
(0,60,218.05555555555551,1424951931637)
(1,75,272.2222222222222,1424951936639)
(0,55,233.3333333333333,1424951932637)
(1,75,272.2222222222222,1424951936639)
(1,75,272.2222222222222,1424951936639)
(0,55,288.88888888888886,1424951936639)
(1,70,329.16666666666663,1424951939640)
(0,55,373.61111111111114,1424951942641)
(1,80,519.4444444444443,1424951949644)
(1,85,586.111111111111,1424951952645)
(0,50,487.50000000000006,1424951951644)
(1,85,586.111111111111,1424951952645)
(0,60,590.2777777777778,1424951959647)
(1,85,586.111111111111,1424951952645)
(0,75,648.6111111111112,1424951962648)
(1,85,715.2777777777776,1424951958647)
(1,95,858.333333333333,1424951964649)
(0,80,670.8333333333334,1424951963648)
(1,95,858.333333333333,1424951964649)
(0,80,670.8333333333334,1424951963648)
(1,100,937.4999999999998,1424951967650)
(1,100,937.4999999999998,1424951967650)
(0,80,670.8333333333334,1424951963648)
(1,100,937.4999999999998,1424951967650)
(0,85,861.1111111111112,1424951972651)
(1,100,937.4999999999998,1424951967650)
(1,100,937.4999999999998,1424951967650)
(0,85,861.1111111111112,1424951972651)
(1,100,993.0555555555554,1424951969650)
(0,85,861.1111111111112,1424951972651)
(1,100,1048.611111111111,1424951971651)
(1,100,1130.5555555555557,1424951974652)
(0,90,1058.3333333333335,1424951981654)
(1,100,1158.3333333333335,1424951975652)
(0,95,1133.3333333333335,1424951984655)
(1,100,1240.277777777778,1424951978653)
(0,95,1133.3333333333335,1424951984655)
(1,100,1268.0555555555559,1424951979654)
(0,95,1133.3333333333335,1424951984655)
(1,100,1323.6111111111115,1424951981654)
(0,95,1133.3333333333335,1424951984655)
(1,100,1379.1666666666672,1424951983655)
(0,100,1358.3333333333335,1424951993659)
(1,100,1563.8888888888896,1424951990658)
(0,100,1358.3333333333335,1424951993659)
(1,100,1563.8888888888896,1424951990658)
(0,100,1358.3333333333335,1424951993659)
(1,100,1563.8888888888896,1424951990658)
(0,100,1358.3333333333335,1424951993659)
(0,100,1358.3333333333335,1424951993659)
(1,100,1669.4444444444453,1424951994659)
(0,100,1440.277777777778,1424951996660)
(1,90,1720.8333333333342,1424951996660)
(0,100,1468.0555555555559,1424951997660)
(1,95,1973.6111111111115,1424952007664)
(0,100,1522.2222222222226,1424951999661)
(0,100,1627.7777777777783,1424952003662)
(1,95,1973.6111111111115,1424952007664)
(0,100,1627.7777777777783,1424952003662)
(1,95,1973.6111111111115,1424952007664)
(0,100,1709.7222222222229,1424952006663)
(0,100,1737.5000000000007,1424952007664)
(1,95,1973.6111111111115,1424952007664)
"""

#: ``TopSpeedWindowingExampleData.TOP_CASE_CLASS_SPEEDS``: what the Scala example's ITCase
#: expects of its ``CarEvent`` case class, ``TOP_SPEEDS``'s 71 lines each as ``CarEvent(...)``
#: (Flink's two lists agree line for line)
TOP_CASE_CLASS_SPEEDS = "".join(f"CarEvent{line}\n" for line in TOP_SPEEDS.splitlines())

#: ``WordCountData.TEXT`` (flink-test-utils, org.apache.flink.test.testdata): the input of the
#: ``WordCount`` and ``WindowWordCount`` tests in ``StreamingExamplesITCase``
WORD_COUNT_TEXT = """\
Goethe - Faust: Der Tragoedie erster Teil
Prolog im Himmel.
Der Herr. Die himmlischen Heerscharen. Nachher Mephistopheles. Die drei
Erzengel treten vor.
RAPHAEL: Die Sonne toent, nach alter Weise, In Brudersphaeren Wettgesang,
Und ihre vorgeschriebne Reise Vollendet sie mit Donnergang. Ihr Anblick
gibt den Engeln Staerke, Wenn keiner Sie ergruenden mag; die unbegreiflich
hohen Werke Sind herrlich wie am ersten Tag.
GABRIEL: Und schnell und unbegreiflich schnelle Dreht sich umher der Erde
Pracht; Es wechselt Paradieseshelle Mit tiefer, schauervoller Nacht. Es
schaeumt das Meer in breiten Fluessen Am tiefen Grund der Felsen auf, Und
Fels und Meer wird fortgerissen Im ewig schnellem Sphaerenlauf.
MICHAEL: Und Stuerme brausen um die Wette Vom Meer aufs Land, vom Land
aufs Meer, und bilden wuetend eine Kette Der tiefsten Wirkung rings umher.
Da flammt ein blitzendes Verheeren Dem Pfade vor des Donnerschlags. Doch
deine Boten, Herr, verehren Das sanfte Wandeln deines Tags.
ZU DREI: Der Anblick gibt den Engeln Staerke, Da keiner dich ergruenden
mag, Und alle deine hohen Werke Sind herrlich wie am ersten Tag.
MEPHISTOPHELES: Da du, o Herr, dich einmal wieder nahst Und fragst, wie
alles sich bei uns befinde, Und du mich sonst gewoehnlich gerne sahst, So
siehst du mich auch unter dem Gesinde. Verzeih, ich kann nicht hohe Worte
machen, Und wenn mich auch der ganze Kreis verhoehnt; Mein Pathos braechte
dich gewiss zum Lachen, Haettst du dir nicht das Lachen abgewoehnt. Von
Sonn' und Welten weiss ich nichts zu sagen, Ich sehe nur, wie sich die
Menschen plagen. Der kleine Gott der Welt bleibt stets von gleichem
Schlag, Und ist so wunderlich als wie am ersten Tag. Ein wenig besser
wuerd er leben, Haettst du ihm nicht den Schein des Himmelslichts gegeben;
Er nennt's Vernunft und braucht's allein, Nur tierischer als jedes Tier
zu sein. Er scheint mir, mit Verlaub von euer Gnaden, Wie eine der
langbeinigen Zikaden, Die immer fliegt und fliegend springt Und gleich im
Gras ihr altes Liedchen singt; Und laeg er nur noch immer in dem Grase! In
jeden Quark begraebt er seine Nase.
DER HERR: Hast du mir weiter nichts zu sagen? Kommst du nur immer
anzuklagen? Ist auf der Erde ewig dir nichts recht?
MEPHISTOPHELES: Nein Herr! ich find es dort, wie immer, herzlich
schlecht. Die Menschen dauern mich in ihren Jammertagen, Ich mag sogar
die armen selbst nicht plagen.
DER HERR: Kennst du den Faust?
MEPHISTOPHELES: Den Doktor?
DER HERR: Meinen Knecht!
MEPHISTOPHELES: Fuerwahr! er dient Euch auf besondre Weise. Nicht irdisch
ist des Toren Trank noch Speise. Ihn treibt die Gaerung in die Ferne, Er
ist sich seiner Tollheit halb bewusst; Vom Himmel fordert er die schoensten
Sterne Und von der Erde jede hoechste Lust, Und alle Naeh und alle Ferne
Befriedigt nicht die tiefbewegte Brust.
DER HERR: Wenn er mir auch nur verworren dient, So werd ich ihn bald in
die Klarheit fuehren. Weiss doch der Gaertner, wenn das Baeumchen gruent, Das
Bluet und Frucht die kuenft'gen Jahre zieren.
MEPHISTOPHELES: Was wettet Ihr? den sollt Ihr noch verlieren! Wenn Ihr
mir die Erlaubnis gebt, Ihn meine Strasse sacht zu fuehren.
DER HERR: Solang er auf der Erde lebt, So lange sei dir's nicht verboten,
Es irrt der Mensch so lang er strebt.
MEPHISTOPHELES: Da dank ich Euch; denn mit den Toten Hab ich mich niemals
gern befangen. Am meisten lieb ich mir die vollen, frischen Wangen. Fuer
einem Leichnam bin ich nicht zu Haus; Mir geht es wie der Katze mit der Maus.
DER HERR: Nun gut, es sei dir ueberlassen! Zieh diesen Geist von seinem
Urquell ab, Und fuehr ihn, kannst du ihn erfassen, Auf deinem Wege mit
herab, Und steh beschaemt, wenn du bekennen musst: Ein guter Mensch, in
seinem dunklen Drange, Ist sich des rechten Weges wohl bewusst.
MEPHISTOPHELES: Schon gut! nur dauert es nicht lange. Mir ist fuer meine
Wette gar nicht bange. Wenn ich zu meinem Zweck gelange, Erlaubt Ihr mir
Triumph aus voller Brust. Staub soll er fressen, und mit Lust, Wie meine
Muhme, die beruehmte Schlange.
DER HERR: Du darfst auch da nur frei erscheinen; Ich habe deinesgleichen
nie gehasst. Von allen Geistern, die verneinen, ist mir der Schalk am
wenigsten zur Last. Des Menschen Taetigkeit kann allzu leicht erschlaffen,
er liebt sich bald die unbedingte Ruh; Drum geb ich gern ihm den Gesellen
zu, Der reizt und wirkt und muss als Teufel schaffen. Doch ihr, die echten
Goettersoehne, Erfreut euch der lebendig reichen Schoene! Das Werdende, das
ewig wirkt und lebt, Umfass euch mit der Liebe holden Schranken, Und was
in schwankender Erscheinung schwebt, Befestigt mit dauernden Gedanken!
(Der Himmel schliesst, die Erzengel verteilen sich.)
MEPHISTOPHELES (allein): Von Zeit zu Zeit seh ich den Alten gern, Und
huete mich, mit ihm zu brechen. Es ist gar huebsch von einem grossen Herrn,
So menschlich mit dem Teufel selbst zu sprechen."""

#: ``WordCountData.COUNTS``: each word of ``WORD_COUNT_TEXT`` and its count, as Flink's
#: ``WordCount`` tokenizer splits it (``COUNTS_AS_TUPLES`` is the same as ``(word,count)``
#: lines, ``STREAMING_COUNTS_AS_TUPLES`` each word's running counts 1..count)
WORD_COUNTS = """\
machen 1 zeit 2 heerscharen 1 keiner 2 meine 3 fuehr 1 triumph 1 kommst 1 frei 1 schaffen 1
gesinde 1 langbeinigen 1 schalk 1 besser 1 solang 1 meer 4 fragst 1 gabriel 1 selbst 2 bin 1
sich 7 du 11 sogar 1 geht 1 immer 4 mensch 2 befestigt 1 lebt 2 mag 3 engeln 2 breiten 1
blitzendes 1 tags 1 sie 2 plagen 2 allzu 1 meisten 1 o 1 pfade 1 kennst 1 nichts 3 gedanken 1
befriedigt 1 mich 6 s 3 es 8 verneinen 1 er 13 gleich 1 baeumchen 1 donnergang 1
wunderlich 1 reise 1 urquell 1 doch 3 aufs 2 toten 1 niemals 1 eine 2 hab 1 darfst 1 da 5
gen 1 einem 2 teil 1 das 7 speise 1 wenig 1 sterne 1 geb 1 welten 1 alle 3 toent 1 gras 1
felsen 1 kette 1 ich 14 fuer 2 als 3 mein 1 schoene 1 verzeih 1 schwankender 1 wie 9
menschlich 1 gaertner 1 taetigkeit 1 bange 1 liebe 1 sei 2 seh 1 tollheit 1 am 6 michael 1
geist 1 ab 1 nahst 1 vollendet 1 liebt 1 brausen 1 nase 1 erlaubt 1 weiss 2 schnellem 1
deinem 1 gleichem 1 gaerung 1 dauernden 1 deines 1 vorgeschriebne 1 irdisch 1 worte 1
verehren 1 hohen 2 weise 2 kuenft 1 werdende 1 wette 2 wuetend 1 erscheinung 1 gar 2
verlieren 1 braucht 1 weiter 1 trank 1 tierischer 1 wohl 1 verteilen 1 verhoehnt 1
schaeumt 1 himmelslichts 1 unbedingte 1 herzlich 1 anblick 2 nennt 1 gruent 1 bluet 1
leichnam 1 erschlaffen 1 jammertagen 1 zieh 1 ihm 3 besondre 1 ihn 5 grossen 1 vollen 1
ihr 7 boten 1 voller 1 singt 1 muhme 1 schon 1 last 1 kleine 1 paradieseshelle 1 nein 1
echten 1 unter 1 bei 1 herr 11 gern 3 sphaerenlauf 1 stets 1 ganze 1 braechte 1 fordert 1
schoensten 1 herrlich 2 gegeben 1 allein 2 reichen 1 schauervoller 1 musst 1 recht 1
bleibt 1 pracht 1 treibt 1 befangen 1 was 2 menschen 3 jede 1 hohe 1 tiefsten 1 bilden 1
drum 1 gibt 2 guter 1 fuerwahr 1 im 3 grund 1 in 9 hoechste 1 schliesst 1 fels 1 steh 1
euer 1 erster 1 ersten 3 goettersoehne 1 brechen 1 tiefen 1 frucht 1 kreis 1 siehst 1
wege 1 ist 8 zikaden 1 frischen 1 ruh 1 deine 2 maus 1 brudersphaeren 1 nachher 1 euch 4
gnaden 1 anzuklagen 1 schlange 1 staerke 2 erde 4 verlaub 1 sanfte 1 holden 1 sonst 1
treten 1 sahst 1 alten 1 um 1 wieder 1 alter 1 altes 1 nun 1 lieb 1 gesellen 1 erscheinen 1
wirkt 2 haettst 2 nur 7 tiefbewegte 1 lachen 2 drange 1 schlag 1 schein 1 muss 1
verworren 1 weges 1 allen 1 gewoehnlich 1 alles 1 halb 1 stuerme 1 springt 1 sollt 1
klarheit 1 so 6 erfassen 1 liedchen 1 prolog 1 zur 1 fressen 1 zum 1 faust 2 erzengel 2
jahre 1 sonn 1 raphael 1 land 2 lang 1 gelange 1 lust 2 welt 1 sehe 1 ihre 1 jedes 1
erfreut 1 seiner 1 denn 1 wandeln 1 wechselt 1 jeden 1 dort 1 schlecht 1 wenigsten 1
wuerd 1 schranken 1 bewusst 2 seinem 2 gehasst 1 sein 1 meinem 1 meinen 1 pathos 1 herrn 1
lange 2 herab 1 diesen 1 ihren 1 beruehmte 1 goethe 1 tag 3 tier 1 quark 1 dank 1 seine 1
teufel 2 zweck 1 wenn 7 soll 1 wirkung 1 erlaubnis 1 lebendig 1 uns 1 leicht 1 gewiss 1
schnell 1 und 29 gerne 1 rechten 1 umher 2 vernunft 1 grase 1 nach 1 leben 1 gott 1 der 29
des 5 doktor 1 beschaemt 1 dreht 1 habe 1 sagen 2 bekennen 1 dunklen 1 wettet 1 den 9
mephistopheles 9 dem 4 auch 4 kann 2 armen 1 mir 9 strebt 1 gut 2 mit 11 bald 2
himmlischen 1 himmel 3 noch 3 kannst 1 deinesgleichen 1 flammt 1 ergruenden 2 nacht 1
scheint 1 ferne 2 tragoedie 1 abgewoehnt 1 reizt 1 geistern 1 nicht 10 sacht 1
unbegreiflich 2 schnelle 1 einmal 1 werd 1 werke 2 begraebt 1 knecht 1 rings 1 wird 1
katze 1 huete 1 fortgerissen 1 gebt 1 huebsch 1 hast 1 irrt 1 befinde 1 sind 2 fuehren 2
fliegt 1 ewig 3 brust 2 sonne 1 sprechen 1 ein 3 strasse 1 von 8 ueberlassen 1 dir 4 vom 3
zu 11 schwebt 1 die 22 vor 2 wangen 1 wettgesang 1 donnerschlags 1 find 1 dich 3 umfass 1
verboten 1 laeg 1 nie 1 drei 2 dauern 1 toren 1 dauert 1 verheeren 1 fliegend 1 aus 1
staub 1 fluessen 1 haus 1 auf 5 dient 2 tiefer 1 naeh 1 zieren 1"""

#: ``SessionWindowingData.EXPECTED`` (flink-examples-streaming, windowing/util): what
#: ``SessionWindowingITCase`` expects of ``SessionWindowing``
SESSION_WINDOWING_EXPECTED = """\
(a,1,1)
(c,6,1)
(c,11,1)
(b,1,3)
(a,10,1)"""

#: ``WindowJoinData.GRADES_INPUT`` (flink-examples-streaming src/test, join): ``time,name,grade``
#: (line 19's name is " tom", with its space, as in Flink's data)
GRADES_INPUT = """\
0,john,5 0,tom,3 0,alice,1 0,grace,5 1,john,4 1,bob,1 1,alice,2 1,alice,3 1,bob,5 1,alice,3
1,tom,5 2,john,2 2,john,1 2,grace,2 2,jerry,2 2,tom,4 2,bob,4 2,bob,2 3,_tom,2 3,alice,5
3,grace,5 3,grace,1 3,alice,1 3,grace,3 3,tom,1 4,jerry,5 4,john,3 4,john,4 4,john,1
4,jerry,3 4,grace,3 4,bob,3 5,john,3 5,jerry,4 5,tom,5 5,tom,4 5,john,2 5,jerry,1 5,bob,1
6,john,5 6,grace,4 6,tom,5 6,john,4 6,tom,1 6,grace,1 6,john,2 7,jerry,3 7,jerry,5 7,tom,2
7,tom,2 7,alice,4 7,tom,4 7,jerry,4 8,john,3 8,grace,4 8,tom,3 8,jerry,4 8,john,5 8,john,4
8,jerry,1 9,john,5 9,alice,2 9,tom,1 9,alice,5 9,grace,4 9,bob,4 9,jerry,1 10,john,5
10,tom,4 10,tom,5 10,jerry,5 10,tom,1 10,grace,3 10,bob,5 11,john,1 11,alice,1 11,grace,3
11,grace,1 11,jerry,1 11,jerry,4 12,bob,4 12,alice,3 12,tom,5 12,alice,4 12,alice,4
12,grace,4 12,john,5 13,john,5 13,grace,4 13,tom,4 13,john,4 13,john,5 13,alice,5
13,jerry,5 14,john,3 14,tom,5 14,jerry,4 14,grace,4 14,john,3 14,bob,2"""

#: ``WindowJoinData.SALARIES_INPUT``: ``time,name,salary``
SALARIES_INPUT = """\
0,john,6469 0,jerry,6760 0,jerry,8069 1,tom,3662 1,grace,8427 1,john,9425 1,bob,9018
1,john,352 1,tom,3770 2,grace,7622 2,jerry,7441 2,alice,1468 2,bob,5472 2,grace,898
3,tom,3849 3,grace,1865 3,alice,5582 3,john,9511 3,alice,1541 4,john,2477 4,grace,3561
4,john,1670 4,grace,7290 4,grace,6565 5,tom,6179 5,tom,1601 5,john,2940 5,bob,4685
5,bob,710 5,bob,5936 6,jerry,1412 6,grace,6515 6,grace,3321 6,tom,8088 6,john,2876
7,bob,9896 7,grace,7368 7,grace,9749 7,bob,2048 7,alice,4782 8,alice,3375 8,tom,5841
8,bob,958 8,bob,5258 8,tom,3935 8,jerry,4394 9,alice,102 9,alice,4931 9,alice,5240
9,jerry,7951 9,john,5675 10,bob,609 10,alice,5997 10,jerry,9651 10,alice,1328 10,bob,1022
11,grace,2578 11,jerry,9704 11,tom,4476 11,grace,3784 11,alice,6144 12,bob,6213
12,alice,7525 12,jerry,2908 12,grace,8464 12,jerry,9920 13,bob,3720 13,bob,7612
13,alice,7211 13,jerry,6484 13,alice,1711 14,jerry,5994 14,grace,928 14,jerry,2492
14,grace,9080 14,tom,4330 15,bob,8302 15,john,4981 15,tom,1781 15,grace,1379 15,jerry,3700
16,jerry,3584 16,jerry,2038 16,jerry,3902 16,tom,1336 16,jerry,7500 17,tom,3648
17,alice,2533 17,tom,8685 17,bob,3968 17,tom,3241 17,bob,7461 18,jerry,2138 18,alice,7503
18,alice,6424 18,tom,140 18,john,9802 19,grace,2977 19,grace,889 19,john,1338"""


def join_lines(data: str) -> list[str]:
    """The lines of ``GRADES_INPUT``/``SALARIES_INPUT`` (``_`` stands for the space of
    Flink's " tom")."""
    return [line.replace("_", " ") for line in data.split()]
