"""Legacy code pages: is each sentence, encoded in its language's 8-bit code page, read back as is?

    python bench/encodings.py [--realdocs ../shared/realdocs]

Two sets of sentences, one line and four lines each: the first was used while writing the
readings check in docshelf/parse/_alphabets.py, the second was written after it (held out).
Then every file of the realdocs corpus that is not UTF-8, with the encoding it is read in.
"""

# ruff: noqa: E501  (one sentence per line)
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from docshelf.parse.decode import detect_encoding, read_text

TUNING = {
    "fr cp1252": "Le comité a décidé que la crème brûlée serait servie à la fête de Noël, où les élèves français chanteront.",
    "de cp1252": "Die Größe der Bäume überrascht die Förster; außerdem müssen wir die Prüfung für Köln früher beginnen.",
    "es cp1252": "El niño comió una manzana en la estación; mañana habrá más información sobre la canción y el año próximo.",
    "pt cp1252": "A informação sobre a situação econômica não está disponível; as mães e os irmãos estão à espera.",
    "it cp1252": "La città è più bella di quanto pensassi; perché non andiamo là domani, così vediamo l'università?",
    "sv cp1252": "Vi måste åka till Göteborg på fredag; där är vädret bättre än i Malmö och sjöarna är öppna.",
    "da cp1252": "Vi skal køre til Århus på fredag, hvor vejret er bedre; søen er åben og børnene leger ude.",
    "nl cp1252": "De ééndagscursus over coöperatie en reünie begint om negen uur in het café naast de kerk.",
    "is cp1252": "Við fórum til Reykjavíkur í gær og þar var mjög kalt; börnin léku sér úti í snjónum allan daginn.",
    "pl cp1250": "Zażółć gęślą jaźń; w poniedziałek musimy pojechać do Łodzi, gdzie pogoda jest lepsza niż w Krakowie.",
    "cs cp1250": "Příliš žluťoučký kůň úpěl ďábelské ódy; zítra pojedeme do Brna, kde je počasí lepší než v Praze.",
    "hu cp1250": "Árvíztűrő tükörfúrógép; holnap Budapestre megyünk, ahol az időjárás jobb, mint Győrben.",
    "ro cp1250": "Mâine mergem la Bucureşti, unde vremea este mai bună decât în Iaşi; copiii învaţă în şcoală.",
    "hr cp1250": "Sutra idemo u Zagreb, gdje je vrijeme bolje nego u Splitu; djeca uče u školi čitati i pisati.",
    "tr cp1254": "Türkçe belgeler için arama: çalışma saatleri, başvuru formunu doldurun ve gönderin; öğrenciler İstanbul'da yaşıyor.",
    "tr2 cp1254": "Bu bir deneme. İstanbul'da yaşıyorum ve şu an çalışıyorum.",
    "tr3 cp1254": "Yarın Ankara'ya gideceğiz; orada hava daha güzel ve çocuklar okulda okumayı öğreniyor. Şirketin müdürü toplantıya geç kaldı.",
    "lt cp1257": "Rytoj važiuosime į Vilnių, kur oras geresnis nei Kaune; vaikai mokykloje mokosi skaityti ir rašyti.",
    "lv cp1257": "Rīt brauksim uz Rīgu, kur laiks ir labāks nekā Liepājā; bērni skolā mācās lasīt un rakstīt, šodien ļoti žēl.",
    "et cp1257": "Homme sõidame Tallinna, kus ilm on parem kui Tartus; lapsed õpivad koolis lugema ja kirjutama, öösel sajab.",
    "ru cp1251": "Завтра мы поедем в Москву, где погода лучше, чем в Петербурге; дети учатся читать и писать в школе.",
    "ru koi8_r": "Завтра мы поедем в Москву, где погода лучше, чем в Петербурге; дети учатся читать и писать в школе.",
    "uk cp1251": "Завтра ми поїдемо до Києва, де погода краща, ніж у Львові; діти вчаться читати і писати в школі.",
    "el cp1253": "Αύριο θα πάμε στην Αθήνα, όπου ο καιρός είναι καλύτερος από τη Θεσσαλονίκη· τα παιδιά μαθαίνουν γράμματα.",
    "he cp1255": "מחר ניסע לירושלים, שם מזג האוויר טוב יותר מאשר בתל אביב; הילדים לומדים לקרוא ולכתוב בבית הספר.",
    "ar cp1256": "غدا سنسافر إلى القاهرة حيث الطقس أفضل من الإسكندرية؛ الأطفال يتعلمون القراءة والكتابة في المدرسة.",
    "fr short cp1252": "café au lait, s'il vous plaît",
    "de short cp1252": "Grüße aus Köln",
}
HELD_OUT = {
    "fr cp1252": "Après la réunion, nous irons au théâtre voir une pièce très appréciée; le garçon a oublié son manteau.",
    "fr+de cp1252": "Bonjour à tous. Grüße aus München! Le café est fermé, die Straße ist gesperrt. À bientôt, schöne Grüße.",
    "es cp1252": "¿Dónde está la biblioteca? Señor, la información está en el segundo piso, junto a la cafetería pequeña.",
    "pt cp1252": "Não sei se você já ouviu falar, mas a reunião foi adiada para março por causa das eleições.",
    "de cp850": "Über die Brücke gehen täglich viele Fußgänger; die Größe der Städte wächst schneller als erwartet.",
    "tr cp1254": "Geçen hafta İzmir'deki toplantıda şirketimizin yeni ürünlerini tanıttık; müşteriler çok ilgilendi ve sipariş verdiler.",
    "tr iso8859_9": "Öğretmenimiz dün sınıfta ödevlerimizi kontrol etti; çalışkan öğrencilere teşekkür etti.",
    "pl cp1250": "Wczoraj byliśmy w kinie na świetnym filmie; później poszliśmy do restauracji, gdzie jedliśmy pierogi z mięsem.",
    "pl iso8859_2": "Dziękuję bardzo za pomoc; jutro spotkamy się przed dworcem o ósmej rano, jeśli pogoda pozwoli.",
    "cs cp1250": "Včera jsme byli v divadle a potom jsme šli na večeři do restaurace, kde vařili výborné knedlíky.",
    "sk cp1250": "Včera sme boli v divadle a potom sme išli na večeru do reštaurácie, kde varili výborné halušky.",
    "hu cp1250": "Tegnap a színházban voltunk, utána egy étterembe mentünk, ahol kitűnő gulyáslevest főztek.",
    "sl cp1250": "Včeraj smo bili v gledališču, potem pa smo šli na večerjo v restavracijo, kjer so kuhali žlikrofe.",
    "lt cp1257": "Vakar buvome teatre, o paskui nuėjome vakarienės į restoraną, kur virė puikius cepelinus su spirgučiais.",
    "et cp1257": "Eile käisime teatris ja pärast läksime restorani õhtust sööma, kus pakuti väga head šokolaadikooki.",
    "sv cp1252": "Igår var vi på teatern och sedan gick vi och åt middag på en restaurang där de serverade köttbullar.",
    "no cp1252": "I går var vi i teateret, og etterpå gikk vi ut og spiste middag på en restaurant som serverte fårikål.",
    "ru cp1251": "Вчера мы были в театре, а потом пошли ужинать в ресторан, где подавали отличные пельмени со сметаной.",
    "ru cp866": "Вчера мы были в театре, а потом пошли ужинать в ресторан, где подавали отличные пельмени со сметаной.",
    "bg cp1251": "Вчера бяхме на театър, а след това отидохме на вечеря в ресторант, където сервираха чудесна баница.",
    "el cp1253": "Χθες πήγαμε στο θέατρο και μετά πήγαμε για φαγητό σε ένα εστιατόριο που σέρβιρε υπέροχο μουσακά.",
    "en quotes cp1252": "The manager said “we’ll ship it on Monday” — but the release notes didn’t mention the 10 % discount… £5 only.",
}


def check(name: str, sentences: dict[str, str]) -> None:
    wrong = []
    for key, text in sentences.items():
        codec = key.split()[-1]
        for reps in (1, 4):
            data = ((text + " ") * reps).encode(codec)
            got = detect_encoding(data)
            if got is None or data.decode(got) != (text + " ") * reps:
                wrong.append(f"  {key} x{reps}: read as {got}")
    print(f"{name}: {2 * len(sentences) - len(wrong)} of {2 * len(sentences)} read back as written")
    if wrong:
        print("\n".join(wrong))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--realdocs", type=Path, default=Path(__file__).parents[1] / ".." / "shared" / "realdocs")
    args = p.parse_args()
    print(f"$ python {' '.join(sys.argv)}")
    print(f"{platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    started = time.perf_counter()
    check("tuning sentences", TUNING)
    check("held-out sentences", HELD_OUT)
    files = args.realdocs / "files"
    if files.is_dir():
        print("realdocs files that are not UTF-8:")
        for path in sorted(files.rglob("*")):
            if not path.is_file() or path.suffix.lower() not in {".txt", ".csv", ".md", ".html", ".htm"}:
                continue
            data = path.read_bytes()
            try:
                data.decode("utf-8")
                continue
            except UnicodeDecodeError:
                pass
            print(f"  {path.relative_to(files)}: {read_text(data, str(path))[1]}")
    print(f"took {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
