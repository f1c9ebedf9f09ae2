"""The word lists of the built-in English-French corpus (see :mod:`.synthetic`).

Every entry gives the English forms and the French forms the grammar needs, so that the
generator never has to guess: nouns carry their gender and plural, adjectives their four
agreed forms (plus the pre-vowel form of ``beau``/``vieux``/``nouveau``), verbs their
present-tense forms for ``je`` / ``il`` / ``nous`` / ``ils``. Only words whose translation is
unambiguous in this grammar are used (no "you", "they", or "that" as a determiner).
"""
from __future__ import annotations

# ---------------------------------------------------------------- nouns
# (english singular, english plural or "", french singular, french plural or "", gender)
# An empty plural means the regular one (+s); French -eau/-al plurals are written out.
ANIMATE_NOUNS = [
    ("cat", "", "chat", "", "m"), ("dog", "", "chien", "", "m"),
    ("bird", "", "oiseau", "oiseaux", "m"), ("horse", "", "cheval", "chevaux", "m"),
    ("mouse", "mice", "souris", "souris", "f"), ("rabbit", "", "lapin", "", "m"),
    ("cow", "", "vache", "", "f"), ("wolf", "wolves", "loup", "", "m"),
    ("bear", "", "ours", "ours", "m"), ("fox", "foxes", "renard", "", "m"),
    ("elephant", "", "éléphant", "", "m"), ("eagle", "", "aigle", "", "m"),
    ("man", "men", "homme", "", "m"), ("woman", "women", "femme", "", "f"),
    ("child", "children", "enfant", "", "m"), ("boy", "", "garçon", "", "m"),
    ("girl", "", "fille", "", "f"), ("friend", "", "ami", "", "m"),
    ("teacher", "", "professeur", "", "m"), ("student", "", "étudiant", "", "m"),
    ("doctor", "", "médecin", "", "m"), ("king", "", "roi", "", "m"),
    ("queen", "", "reine", "", "f"), ("farmer", "", "fermier", "", "m"),
    ("neighbour", "", "voisin", "", "m"), ("brother", "", "frère", "", "m"),
    ("sister", "", "sœur", "", "f"), ("father", "", "père", "", "m"),
    ("mother", "", "mère", "", "f"), ("uncle", "", "oncle", "", "m"),
    ("aunt", "", "tante", "", "f"), ("actor", "", "acteur", "", "m"),
    ("singer", "", "chanteur", "", "m"), ("soldier", "", "soldat", "", "m"),
]
THING_NOUNS = [
    ("house", "", "maison", "", "f"), ("car", "", "voiture", "", "f"),
    ("book", "", "livre", "", "m"), ("table", "", "table", "", "f"),
    ("tree", "", "arbre", "", "m"), ("city", "cities", "ville", "", "f"),
    ("river", "", "rivière", "", "f"), ("flower", "", "fleur", "", "f"),
    ("apple", "", "pomme", "", "f"), ("letter", "", "lettre", "", "f"),
    ("door", "", "porte", "", "f"), ("window", "", "fenêtre", "", "f"),
    ("chair", "", "chaise", "", "f"), ("garden", "", "jardin", "", "m"),
    ("bridge", "", "pont", "", "m"), ("street", "", "rue", "", "f"),
    ("school", "", "école", "", "f"), ("church", "churches", "église", "", "f"),
    ("island", "", "île", "", "f"), ("hotel", "", "hôtel", "", "m"),
    ("boat", "", "bateau", "bateaux", "m"), ("train", "", "train", "", "m"),
    ("painting", "", "tableau", "tableaux", "m"), ("key", "", "clé", "", "f"),
    ("bottle", "", "bouteille", "", "f"), ("glass", "glasses", "verre", "", "m"),
    ("newspaper", "", "journal", "journaux", "m"), ("road", "", "route", "", "f"),
    ("forest", "", "forêt", "", "f"), ("mountain", "", "montagne", "", "f"),
    ("lake", "", "lac", "", "m"), ("village", "", "village", "", "m"),
    ("area", "", "zone", "", "f"), ("market", "", "marché", "", "m"),
    ("office", "", "bureau", "bureaux", "m"), ("bag", "", "sac", "", "m"),
    ("hat", "", "chapeau", "chapeaux", "m"), ("shirt", "", "chemise", "", "f"),
    ("song", "", "chanson", "", "f"), ("story", "stories", "histoire", "", "f"),
    ("idea", "", "idée", "", "f"), ("umbrella", "", "parapluie", "", "m"),
    ("orange", "", "orange", "", "f"), ("egg", "", "œuf", "", "m"),
    ("plane", "", "avion", "", "m"), ("bicycle", "", "vélo", "", "m"),
    ("computer", "", "ordinateur", "", "m"), ("phone", "", "téléphone", "", "m"),
    ("clock", "", "horloge", "", "f"), ("plate", "", "assiette", "", "f"),
    ("cake", "", "gâteau", "gâteaux", "m"), ("bank", "", "banque", "", "f"),
]

# ---------------------------------------------------------------- adjectives
# (english, french m.sg, f.sg or "", m.pl or "", f.pl or "", m.sg before a vowel or "")
# Blank forms are regular: f = m + e (unless it ends in e), pl = sg + s (unless s/x).
PRE_ADJECTIVES = [  # placed before the noun in French too
    ("big", "grand", "", "", "", ""), ("small", "petit", "", "", "", ""),
    ("beautiful", "beau", "belle", "beaux", "belles", "bel"),
    ("old", "vieux", "vieille", "vieux", "vieilles", "vieil"),
    ("new", "nouveau", "nouvelle", "nouveaux", "nouvelles", "nouvel"),
    ("young", "jeune", "", "", "", ""), ("good", "bon", "bonne", "", "", ""),
    ("bad", "mauvais", "", "", "", ""), ("pretty", "joli", "", "", "", ""),
    ("long", "long", "longue", "", "", ""),
]
# Post-nominal adjectives by English order class: a noun phrase takes at most one from a
# class, English lists them by increasing class, French after the noun in mirror order
# ("the european economic area" -> "la zone économique européenne").
POST_ADJECTIVES = {
    0: [("happy", "heureux", "heureuse", "heureux", "heureuses", ""),
        ("sad", "triste", "", "", "", ""), ("tired", "fatigué", "", "", "", ""),
        ("strange", "étrange", "", "", "", ""), ("famous", "célèbre", "", "", "", ""),
        ("rich", "riche", "", "", "", ""), ("quiet", "calme", "", "", "", ""),
        ("fast", "rapide", "", "", "", ""), ("slow", "lent", "", "", "", ""),
        ("dirty", "sale", "", "", "", ""), ("empty", "vide", "", "", "", ""),
        ("modern", "moderne", "", "", "", ""), ("difficult", "difficile", "", "", "", "")],
    1: [("black", "noir", "", "", "", ""), ("white", "blanc", "blanche", "", "", ""),
        ("red", "rouge", "", "", "", ""), ("green", "vert", "", "", "", ""),
        ("blue", "bleu", "", "", "", ""), ("yellow", "jaune", "", "", "", ""),
        ("grey", "gris", "grise", "gris", "", ""),
        ("brown", "marron", "marron", "marron", "marron", "")],
    2: [("french", "français", "française", "français", "", ""),
        ("english", "anglais", "anglaise", "anglais", "", ""),
        ("european", "européen", "européenne", "", "", ""),
        ("american", "américain", "", "", "", ""), ("italian", "italien", "italienne", "", "", ""),
        ("german", "allemand", "", "", "", ""), ("spanish", "espagnol", "", "", "", "")],
    3: [("economic", "économique", "", "", "", ""), ("political", "politique", "", "", "", ""),
        ("public", "public", "publique", "", "", ""),
        ("national", "national", "", "nationaux", "", ""),
        ("social", "social", "", "sociaux", "", "")],
}

# ---------------------------------------------------------------- verbs
# (english base, english 3rd sg, french je, il, nous, ils)
TRANSITIVE_VERBS = [
    ("see", "sees", "vois", "voit", "voyons", "voient"),
    ("like", "likes", "aime", "aime", "aimons", "aiment"),
    ("watch", "watches", "regarde", "regarde", "regardons", "regardent"),
    ("find", "finds", "trouve", "trouve", "trouvons", "trouvent"),
    ("want", "wants", "veux", "veut", "voulons", "veulent"),
    ("know", "knows", "connais", "connaît", "connaissons", "connaissent"),
    ("hear", "hears", "entends", "entend", "entendons", "entendent"),
    ("follow", "follows", "suis", "suit", "suivons", "suivent"),
    ("take", "takes", "prends", "prend", "prenons", "prennent"),
    ("carry", "carries", "porte", "porte", "portons", "portent"),
    ("paint", "paints", "peins", "peint", "peignons", "peignent"),
    ("wash", "washes", "lave", "lave", "lavons", "lavent"),
    ("open", "opens", "ouvre", "ouvre", "ouvrons", "ouvrent"),
    ("close", "closes", "ferme", "ferme", "fermons", "ferment"),
    ("buy", "buys", "achète", "achète", "achetons", "achètent"),
    ("sell", "sells", "vends", "vend", "vendons", "vendent"),
    ("help", "helps", "aide", "aide", "aidons", "aident"),
    ("call", "calls", "appelle", "appelle", "appelons", "appellent"),
    ("build", "builds", "construis", "construit", "construisons", "construisent"),
    ("visit", "visits", "visite", "visite", "visitons", "visitent"),
    ("choose", "chooses", "choisis", "choisit", "choisissons", "choisissent"),
    ("catch", "catches", "attrape", "attrape", "attrapons", "attrapent"),
    ("draw", "draws", "dessine", "dessine", "dessinons", "dessinent"),
    ("push", "pushes", "pousse", "pousse", "poussons", "poussent"),
    ("forget", "forgets", "oublie", "oublie", "oublions", "oublient"),
    ("love", "loves", "adore", "adore", "adorons", "adorent"),
    ("meet", "meets", "rencontre", "rencontre", "rencontrons", "rencontrent"),
    ("read", "reads", "lis", "lit", "lisons", "lisent"),
    ("write", "writes", "écris", "écrit", "écrivons", "écrivent"),
    ("eat", "eats", "mange", "mange", "mangeons", "mangent"),
]
INTRANSITIVE_VERBS = [
    ("sleep", "sleeps", "dors", "dort", "dormons", "dorment"),
    ("run", "runs", "cours", "court", "courons", "courent"),
    ("sing", "sings", "chante", "chante", "chantons", "chantent"),
    ("dance", "dances", "danse", "danse", "dansons", "dansent"),
    ("work", "works", "travaille", "travaille", "travaillons", "travaillent"),
    ("wait", "waits", "attends", "attend", "attendons", "attendent"),
    ("arrive", "arrives", "arrive", "arrive", "arrivons", "arrivent"),
    ("laugh", "laughs", "ris", "rit", "rions", "rient"),
    ("swim", "swims", "nage", "nage", "nageons", "nagent"),
    ("play", "plays", "joue", "joue", "jouons", "jouent"),
    ("cry", "cries", "pleure", "pleure", "pleurons", "pleurent"),
    ("eat", "eats", "mange", "mange", "mangeons", "mangent"),
]
GO = ("go", "goes", "vais", "va", "allons", "vont")
COME = ("come", "comes", "viens", "vient", "venons", "viennent")
BE = {"1sg": ("am", "suis"), "3sg": ("is", "est"), "1pl": ("are", "sommes"),
      "3pl": ("are", "sont")}

# ---------------------------------------------------------------- function words
# subject pronouns: english, french, person, gender (None: unknown, so no predicate adjective)
PRONOUNS = [("i", "je", "1sg", None), ("he", "il", "3sg", "m"), ("she", "elle", "3sg", "f"),
            ("we", "nous", "1pl", None)]
# determiners: english -> (number, french m.sg, f.sg, pl, m.sg before a vowel, f.sg before a
# vowel); blank pre-vowel forms mean "unchanged" (le/la elide to l' in the finishing pass).
DETERMINERS = {
    "the": ("any", "le", "la", "les", "", ""),
    "a": ("sg", "un", "une", "", "", ""),
    "my": ("any", "mon", "ma", "mes", "", "mon"),
    "his": ("any", "son", "sa", "ses", "", "son"),
    "her": ("any", "son", "sa", "ses", "", "son"),
    "our": ("any", "notre", "notre", "nos", "", ""),
    "their": ("any", "leur", "leur", "leurs", "", ""),
    "this": ("sg", "ce", "cette", "", "cet", ""),
    "these": ("pl", "", "", "ces", "", ""),
    "two": ("pl", "", "", "deux", "", ""),
    "three": ("pl", "", "", "trois", "", ""),
}
# prepositions: english words -> french words (a trailing de/à contracts with le/les)
PREPOSITIONS = [
    (("in",), ("dans",)), (("on",), ("sur",)), (("under",), ("sous",)),
    (("behind",), ("derrière",)), (("in", "front", "of"), ("devant",)),
    (("near",), ("près", "de")), (("next", "to"), ("à", "côté", "de")),
    (("with",), ("avec",)), (("without",), ("sans",)), (("far", "from"), ("loin", "de")),
]
# adverbs placed before the verb in English and after it in French
PRE_VERB_ADVERBS = [("often", "souvent"), ("always", "toujours"), ("rarely", "rarement")]
# clause-final time adverbials
TIME_ADVERBIALS = [(("today",), ("aujourd'hui",)), (("tomorrow",), ("demain",)),
                   (("now",), ("maintenant",)), (("every", "day"), ("chaque", "jour")),
                   (("every", "morning"), ("chaque", "matin")),
                   (("in", "the", "evening"), ("le", "soir")), (("tonight",), ("ce", "soir"))]
# clause linkers
CONJUNCTIONS = [(("and",), ("et",)), ((",", "but"), (",", "mais")),
                (("because",), ("parce", "que")), (("when",), ("quand",))]
